/**
 * verbatim/server: the HTTP server (docs/server/README.md): console routes, the Responses API, job
 * routes, the console page; `startServer` is what `verbatim serve` runs.
 */
// The server layer's error codes (and, through errors.ts, those of store and gateway).
import "./error-codes.js";
export { buildServer, DEFAULT_BODY_LIMIT_BYTES, DEFAULT_RATE_LIMIT } from "./app.js";
export type { ServerOptions } from "./app.js";
export { startServer, DEFAULT_DATABASE, DEFAULT_HOST, DEFAULT_PORT } from "./serve.js";
export type { RunningServer, StartServerOptions } from "./serve.js";
export { createApiKey, revokeApiKey, subjectOfApiKey } from "../gateway/keys/api-keys.js";
export type { CreatedApiKey } from "../gateway/keys/api-keys.js";
export { DEFAULT_MODEL_ROUTES, NO_UPSTREAM, resolveUpstream } from "../gateway/upstream/config.js";
export type { ModelRoute, UpstreamConfig, UpstreamProvider } from "../gateway/upstream/config.js";
export { parseModelRoutes, upstreamConfigFromEnv } from "./upstream/config.js";
export { openApiDocument } from "./openapi.js";
export { errorReplySchema } from "./errors.js";
export type { ErrorReply } from "./errors.js";
export type { RateLimitOptions } from "./rate-limit.js";
