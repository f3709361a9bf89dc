import type { FastifyInstance } from "fastify";
import { z } from "zod";

/** Long polling of the console routes: the longest wait. */
export const MAX_WAIT_MS = 25_000;

/** The `wait_ms` query parameter of a long-polling route. */
export function waitMsSchema(waitingFor: string) {
  return z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_MS)
    .default(0)
    .describe(`How long to wait for ${waitingFor} (at most ${MAX_WAIT_MS} ms).`);
}

/** Whether the server has started closing (held requests then answer at once). */
export function closingFlag(app: FastifyInstance): () => boolean {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  return () => closing;
}

/**
 * Runs `hold(stop)` for a request that may be held (long polling, gateway/console/wait.ts):
 * `stop()` is true once the client has gone or the server is closing, so a held request never
 * delays a shutdown nor waits for a client that left.
 */
export async function whileHeld<T>(
  client: NodeJS.EventEmitter & { readonly destroyed?: boolean },
  closing: () => boolean,
  hold: (stop: () => boolean) => Promise<T>,
): Promise<T> {
  let gone = false;
  const onClose = () => (gone = true);
  client.once("close", onClose);
  try {
    return await hold(() => gone || closing() || client.destroyed === true);
  } finally {
    client.off("close", onClose);
  }
}
