import { setTimeout as sleep } from "node:timers/promises";

/** How often a long poll asks for news. */
const WAIT_STEP_MS = 250;

/** A long poll of a console page: how long to wait for news, and when to stop waiting early. */
export interface LongPoll {
  /** The longest wait in milliseconds; 0 answers at once. */
  readonly ms: number;
  /**
   * Asked before each look for news: true once waiting is pointless (the client has gone, the
   * server is closing), so a held request never delays a shutdown.
   */
  readonly stop: () => boolean;
}

/**
 * Waits until `news()` says there is news, `wait.ms` has passed or `wait.stop()` says to stop:
 * `news` should be a cheap read (a count, a few columns), asked every 250 ms, never a page read.
 */
export async function waitForNews(news: () => Promise<boolean>, wait: LongPoll): Promise<void> {
  const deadline = Date.now() + wait.ms;
  while (!wait.stop() && Date.now() < deadline) {
    if (await news()) return;
    await sleep(Math.min(WAIT_STEP_MS, Math.max(0, deadline - Date.now())));
  }
}
