import { setImmediate as yieldToEventLoop } from "node:timers/promises";

/**
 * Work done in slices so that building a console page never blocks the event loop for long
 * (issue 20: at most 20 ms; bench/server/console-event-loop.ts measures it): a slice runs for
 * about SLICE_MS, then the event loop gets a turn.
 */
export const SLICE_MS = 3;

/** Runs `work(index)` for each index, yielding to the event loop every few milliseconds. */
export async function inSlices(count: number, work: (index: number) => void): Promise<void> {
  let sliceStart = performance.now();
  for (let index = 0; index < count; index++) {
    work(index);
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
}

/** `items.map(map)` in slices. */
export async function mapInSlices<T, U>(
  items: readonly T[],
  map: (item: T, index: number) => U,
): Promise<U[]> {
  const out: U[] = [];
  await inSlices(items.length, (index) => out.push(map(items[index] as T, index)));
  return out;
}

/**
 * The compact JSON text of `{ ...before, [key]: items, ...after }`, the items serialized in
 * slices (one `JSON.stringify` of a 1 MiB page blocks the event loop for several ms).
 */
export async function jsonWithArrayInSlices(
  before: Record<string, unknown>,
  key: string,
  items: readonly unknown[],
  after: Record<string, unknown>,
): Promise<string> {
  const parts = await mapInSlices(items, (item) => JSON.stringify(item));
  const head = JSON.stringify(before);
  const tail = JSON.stringify(after);
  return (
    (head === "{}" ? "{" : `${head.slice(0, -1)},`) +
    `${JSON.stringify(key)}:[${parts.join(",")}]` +
    (tail === "{}" ? "}" : `,${tail.slice(1)}`)
  );
}
