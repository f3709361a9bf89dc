/**
 * verbatim/providers: request renderers, response and stream parsers, the HTTP transport and
 * the cache-prefix checker (docs/providers.md).
 */
export { PROVIDER_IDS } from "./types.js";
export type {
  AttachedSignedMaterial,
  CacheOptions,
  OutgoingRequest,
  PanelPart,
  ProviderId,
  RenderInput,
  RenderOptions,
  RenderWarning,
  RenderWarningCode,
  RenderedRequest,
  RetryNotice,
  RoundResult,
  SignedMaterial,
  StopReason,
  StreamEvent,
  ToolDefinition,
  TransportOptions,
  Usage,
} from "./types.js";
export { renderRequest } from "./render.js";
export { createStreamParser, parseResponse } from "./parse.js";
export type { SseEvent, StreamParser } from "./parse.js";
export { sendRound, streamRound } from "./transport.js";
