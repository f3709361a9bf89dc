/**
 * verbatim/providers: request renderers, response and stream parsers, the HTTP transport and
 * the cache-prefix checker (docs/providers.md).
 */
export { PROVIDER_IDS, isProviderId } from "./types.js";
export type {
  AttachedSignedMaterial,
  CacheOptions,
  ModelImage,
  OutgoingRequest,
  PanelCitation,
  PanelPart,
  ProviderId,
  RenderInput,
  RenderOptions,
  RenderWarning,
  RenderWarningCode,
  RenderedRequest,
  RetryNotice,
  RoundResult,
  RoundWarning,
  SignedMaterial,
  StopReason,
  StreamEvent,
  ToolDefinition,
  TransportOptions,
} from "./types.js";
export { renderRequest } from "./render.js";
export { attachSignedMaterial, hasSignedMaterial } from "./signed.js";
export { createStreamParser, parseResponse } from "./parse.js";
export type { SseEvent, StreamParser } from "./parse.js";
export { sendRound, streamRound } from "./transport.js";
export { PROVIDER_ENDPOINTS, requestHeaders, requestUrl, resolveEndpoint } from "./endpoints.js";
export type { ProviderEndpoint } from "./endpoints.js";
export { isRetryableStatus, retryAfterMs } from "./transport.js";
export { SseDecoder } from "./wire/sse.js";
export { checkCachePrefix } from "./cache-prefix/check.js";
export type {
  CachePrefixDifference,
  CachePrefixOptions,
  CachePrefixResult,
} from "./cache-prefix/check.js";
