import type { FastifyInstance } from "fastify";
import { BackgroundAgentJobs, type GatewayMessageStore } from "../../gateway/index.js";
import { registerJobCallerRoutes } from "../jobs/caller-routes.js";
import type { StoreDatabase } from "../../store/database.js";
import { ResponsesService } from "../../gateway/responses/service.js";
import { NO_UPSTREAM, type UpstreamConfig } from "../../gateway/upstream/config.js";
import { registerCompressRoute } from "./compress.js";
import { GatewayConversations } from "../../gateway/conversations/conversations.js";
import { ConversationsService } from "../../gateway/responses/conversation-service.js";
import { registerConversationRoutes } from "./conversations.js";
import { registerModelRoutes } from "./models.js";
import {
  hideDeletedInputItems,
  hideDeletedResponses,
  registerResponseExtraRoutes,
} from "./response-extras.js";
import { registerResponseRoutes } from "./responses.js";
import { RecordedCalls } from "../../gateway/recording/calls.js";
import type { Compression } from "../../gateway/recording/bodies/compression.js";
import { keepRawJsonBodies } from "./pass-through.js";
import { PASS_THROUGH_ROUTES, registerPassThroughRoute } from "./pass-through-routes.js";
import { registerGeminiRoutes } from "./gemini-routes.js";

export interface CallerRouteOptions {
  readonly database: StoreDatabase;
  readonly upstream: UpstreamConfig | undefined;
  readonly store: GatewayMessageStore;
  /** Recorded calls' bodies go through the trajectory sanitizer (docs/server/recorded-calls.md). */
  readonly recordRedact?: boolean;
  /** How recorded bodies' new pieces are compressed (docs/server/recorded-calls.md). */
  readonly recordCompression?: Compression;
  /** Packing of recorded bytes after a subject's idle time (VERBATIM_RECORD_PACK_AFTER_MS). */
  readonly recordPackAfterMs?: number;
}

/**
 * Caller routes (/v1): responses, compression, jobs and the pass-through routes; under
 * per-subject API keys.
 */
export function registerCallerRoutes(app: FastifyInstance, options: CallerRouteOptions): void {
  const { store } = options;
  const conversations = new GatewayConversations(store);
  const conversationsApi = new ConversationsService(conversations, options.upstream?.imageUrls);
  // Before the routes: what a subject deleted is not found on any of them.
  app.addHook("preHandler", hideDeletedResponses(conversationsApi));
  app.addHook("preSerialization", hideDeletedInputItems(conversationsApi));
  registerConversationRoutes(app, conversationsApi);
  registerResponseExtraRoutes(app, {
    conversations,
    store,
    upstream: options.upstream ?? NO_UPSTREAM,
  });
  registerModelRoutes(app, options.upstream ?? NO_UPSTREAM);
  registerResponseRoutes(app, new ResponsesService(store, options.upstream ?? NO_UPSTREAM));
  registerCompressRoute(app, store, options.upstream);
  registerJobCallerRoutes(app, new BackgroundAgentJobs(options.database), store);
  // The pass-through routes keep their bodies' bytes (their own body parser, in their own scope).
  const recorder = new RecordedCalls(options.database, {
    redact: options.recordRedact === true,
    ...(options.recordCompression === undefined ? {} : { compression: options.recordCompression }),
    ...(options.recordPackAfterMs === undefined ? {} : { packAfterMs: options.recordPackAfterMs }),
    onLeftoverError: (error, callId) =>
      app.log.error({ err: error, callId }, "placing a recorded call left unplaced failed"),
    // A call unplaced for a lease was left by a server that died: another places it.
    ...(options.upstream?.responseLeaseMs === undefined
      ? {}
      : { leftoverAfterMs: options.upstream.responseLeaseMs }),
  });
  // Calls a crash left unplaced are placed in the background, and then those a server that died
  // left (gateway/recording/leftovers.ts); close() waits for the placing.
  recorder.placeLeftovers().catch((error: unknown) => {
    app.log.error({ err: error }, "looking for recorded calls left unplaced failed");
  });
  app.addHook("onClose", () => recorder.close());
  const passThroughUpstream = options.upstream ?? NO_UPSTREAM;
  const passThroughRoutes = PASS_THROUGH_ROUTES.map((route) => ({
    route,
    config: passThroughUpstream,
    recorder,
  }));
  void app.register(async (scope) => {
    keepRawJsonBodies(scope, recorder.requests);
    for (const serving of passThroughRoutes) registerPassThroughRoute(scope, serving);
    registerGeminiRoutes(scope, { config: passThroughUpstream, recorder });
  });
}
