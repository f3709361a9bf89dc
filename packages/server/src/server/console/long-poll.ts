import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import { z } from "zod";

/** Long polling of the console routes: the longest wait, and how often the news is asked. */
export const MAX_WAIT_MS = 25_000;
const WAIT_STEP_MS = 250;

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
 * Waits until `news()` says there is news, `waitMs` has passed, the client has gone or the
 * server is closing (a held request never delays a shutdown): `news` should be a cheap read
 * (a count, a few columns), asked every 250 ms, never a page read.
 */
export async function waitForNews(
  news: () => Promise<boolean>,
  waitMs: number,
  client: NodeJS.EventEmitter & { readonly destroyed?: boolean },
  closing: () => boolean,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  let gone = false;
  const onClose = () => (gone = true);
  client.once("close", onClose);
  try {
    while (!gone && !closing() && client.destroyed !== true && Date.now() < deadline) {
      if (await news()) return;
      await sleep(Math.min(WAIT_STEP_MS, Math.max(0, deadline - Date.now())));
    }
  } finally {
    client.off("close", onClose);
  }
}
