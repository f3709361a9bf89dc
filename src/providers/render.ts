import { VerbatimError } from "../core/errors.js";
import type { ProviderId, RenderInput, RenderedRequest } from "./types.js";

/**
 * The exact request body of the next request (pure: the bytes are a function of `input`).
 * Throws a VerbatimError for impossible input (a missing image, a tool call in a user
 * message); lossy mappings come back as `warnings`.
 */
export function renderRequest(provider: ProviderId, input: RenderInput): RenderedRequest {
  void input;
  throw new VerbatimError("internal_error", `rendering for ${provider} is not ready yet`);
}
