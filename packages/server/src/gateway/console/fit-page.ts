import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { ProjectedMessages } from "verbatim-llm/trajectory";
import { fitPageInSteps } from "verbatim-llm/internal";
import { SLICE_MS } from "./slices.js";

/**
 * The page size limit of the console routes (SPEC B12, docs/server/console.md "Page size")
 * without blocking the event loop: the library's cut (`fitPageInSteps`, the steps of
 * `fitPageToLimit`, written once), run a few milliseconds at a time with a turn of the event
 * loop between. A page of 1,000 messages of 8 KiB each took one 200–300 ms block in one piece;
 * bench/server/console-event-loop.ts measures the stall. test/console/fit-page.test.ts holds the
 * two runs to one result.
 */
export async function fitPageYielding<P extends ProjectedMessages>(
  page: P,
  limitBytes: number,
): Promise<P> {
  const steps = fitPageInSteps(page, limitBytes);
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
}
