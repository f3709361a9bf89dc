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
export { createStreamParser, parseResponse } from "./parse.js";
export type { SseEvent, StreamParser } from "./parse.js";
export { sendRound, streamRound } from "./transport.js";
export { checkCachePrefix } from "./cache-prefix/check.js";
export type {
  CachePrefixDifference,
  CachePrefixOptions,
  CachePrefixResult,
} from "./cache-prefix/check.js";
