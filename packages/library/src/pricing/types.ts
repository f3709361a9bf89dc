/**
 * Usage and cost in the terms of format 1 (SPEC A7, A8). These are structurally the same types
 * as `Usage` and `Cost` of src/format (a test holds the two together), kept here so that the
 * pricing and provider layers do not depend on the archive format.
 */

/**
 * Token usage of one request or of a whole conversation (A7). Model tokens only.
 * `input` counts the input tokens neither read from nor written to the prompt cache, so a
 * request's whole input is `input + cacheRead + cacheWrite`. `cacheWrite1h` is the part of
 * `cacheWrite` written at the one-hour TTL; `reportedCost` is the US dollar cost the provider
 * reported itself (OpenRouter). Both optional keys are present only when known.
 */
export interface Usage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly webSearchRequests: number;
  readonly cacheWrite1h?: number | undefined;
  readonly reportedCost?: number | undefined;
}

/**
 * Cost of a conversation (A8): `reported` when every request's cost was reported by the
 * provider; `estimated` from the price table (`partial` when only some requests reported and
 * the others were priced from the table); `unknown` when some request could not be priced;
 * `notBilled` when nothing was billed per token (e.g. a CLI backend on a subscription).
 */
export type Cost =
  | { readonly kind: "reported"; readonly dollars: number }
  | { readonly kind: "estimated"; readonly dollars: number; readonly partial?: boolean | undefined }
  | { readonly kind: "unknown" }
  | { readonly kind: "notBilled" };

/** A usage with every count zero. */
export const ZERO_USAGE: Usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  webSearchRequests: 0,
};
