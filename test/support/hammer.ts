import { SHARED_LIMITS_RETRY_MS } from "../../packages/server/src/gateway/limits/shared-limits.js";

/**
 * Sends one key's requests to several servers in turn for a while, `concurrency` at a time, and
 * counts what each answered: admitted (anything but 401 and 429), rate-limited (429), refused
 * (401). The request is a read the key may make (a conversation that does not exist). A request
 * whose connection failed (a server that is down, as in the fault test) is counted in `failed`.
 */
export interface HammerCounts {
  admitted: number;
  limited: number;
  unauthorized: number;
  /** Requests with no answer: the connection was refused or died. */
  failed: number;
}

export interface HammerResult extends HammerCounts {
  readonly perServer: readonly HammerCounts[];
  /** From the first request sent to the last one sent, in ms. */
  readonly elapsedMs: number;
}

export async function hammer(
  urls: readonly string[],
  headers: Record<string, string>,
  options: { readonly durationMs: number; readonly concurrency: number },
): Promise<HammerResult> {
  const perServer = urls.map(() => ({ admitted: 0, limited: 0, unauthorized: 0, failed: 0 }));
  const started = performance.now();
  let lastSent = started;
  let next = 0;
  const loop = async () => {
    while (performance.now() - started < options.durationMs) {
      const index = next++ % urls.length;
      lastSent = performance.now();
      const counts = perServer[index]!;
      let response: Response;
      try {
        response = await fetch(`${urls[index]}/v1/conversations/conv_missing`, { headers });
        await response.arrayBuffer();
      } catch {
        counts.failed++;
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      if (response.status === 429) counts.limited++;
      else if (response.status === 401) counts.unauthorized++;
      else counts.admitted++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  const sum = (pick: (counts: HammerCounts) => number) =>
    perServer.reduce((total, counts) => total + pick(counts), 0);
  return {
    perServer,
    elapsedMs: lastSent - started,
    admitted: sum((counts) => counts.admitted),
    limited: sum((counts) => counts.limited),
    unauthorized: sum((counts) => counts.unauthorized),
    failed: sum((counts) => counts.failed),
  };
}

/**
 * The times (epoch ms) at which a server logged that its shared limits failed (`serverLogs`:
 * its stderr); with `during`, only the failures whose time on its own (SHARED_LIMITS_RETRY_MS
 * after the failure, docs/scale.md "Limits across servers") overlaps that window.
 */
export function sharedLimitFailures(
  serverLogs: string,
  during?: { readonly from: number; readonly to: number },
): number[] {
  return serverLogs
    .split("\n")
    .filter((line) => line.includes("the shared rate limits failed"))
    .map((line) => Number(/"time":(\d+)/.exec(line)?.[1] ?? Number.NaN))
    .filter(
      (at) =>
        during === undefined || (at >= during.from - SHARED_LIMITS_RETRY_MS && at <= during.to),
    );
}

/**
 * For each server (its stderr), whether it limited on its own during the window: its shared
 * store missed its time, the documented fall-back of a busy machine, under which a server may
 * admit its own bucket beside the shared one. Read once the logs had time to arrive.
 */
export function serversFellBack(
  serverLogs: readonly string[],
  during: { readonly from: number; readonly to: number },
): boolean[] {
  return serverLogs.map((logs) => sharedLimitFailures(logs, during).length > 0);
}
