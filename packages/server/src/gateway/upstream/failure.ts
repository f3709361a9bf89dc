import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { Sanitizer } from "verbatim-llm/trajectory";
import { storableText } from "../responses/repair.js";

/**
 * An upstream call's failure as a caller sees it and the store keeps it: the provider's error
 * mapped to the server's codes (`upstream_not_configured`, `upstream_timeout`,
 * `upstream_failed`), its text scrubbed (scrub.ts) and storable. The unscrubbed error is not
 * kept as its cause, so no log shows it either.
 */
export function upstreamFailure(error: unknown, sanitizer: Sanitizer): VerbatimError {
  const mapped = mappedFailure(error);
  const clean = (text: string) => sanitizer.sanitizeText(storableText(text)).value;
  return new VerbatimError(mapped.code, clean(mapped.message), {
    ...(mapped.where === undefined ? {} : { where: mapped.where }),
    ...(mapped.hint === undefined ? {} : { hint: clean(mapped.hint) }),
  });
}

function mappedFailure(error: unknown): VerbatimError {
  if (isVerbatimError(error)) {
    if (error.code === "provider_api_key_missing") {
      return new VerbatimError("upstream_not_configured", error.message, {
        hint: "Set the provider's API key in the server's environment (docs/server/README.md)",
      });
    }
    if (error.code === "provider_timeout") {
      return new VerbatimError("upstream_timeout", error.message, {
        ...(error.hint === undefined ? {} : { hint: error.hint }),
      });
    }
    const refused = refusedRequestCode(error);
    if (refused !== undefined) {
      return new VerbatimError(refused, error.message, {
        hint: "The provider refused the request before answering; nothing was stored",
      });
    }
    if (error.code.startsWith("provider_")) {
      return new VerbatimError("upstream_failed", error.message, {
        ...(error.hint === undefined ? {} : { hint: error.hint }),
      });
    }
    return error;
  }
  return new VerbatimError(
    "upstream_failed",
    `the upstream request failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/**
 * The code of an upstream's refusal that is the caller's to fix, answered with the upstream's
 * own status instead of 502 (issue 17): 400 and 422 (invalid), 404 (unknown model), 413 (too
 * large), 429 (rate limited after the retries). 401 and 403 concern the server's own key and
 * stay 502 `upstream_failed`.
 */
function refusedRequestCode(
  error: VerbatimError,
):
  | "upstream_invalid_request"
  | "upstream_model_not_found"
  | "upstream_request_too_large"
  | "upstream_rate_limited"
  | undefined {
  if (error.code !== "provider_http_error") return undefined;
  const status = error.details?.["status"];
  switch (status) {
    case 400:
    case 422:
      return "upstream_invalid_request";
    case 404:
      return "upstream_model_not_found";
    case 413:
      return "upstream_request_too_large";
    case 429:
      return "upstream_rate_limited";
    default:
      return undefined;
  }
}
