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
 * The compact JSON text, in UTF-8, of `{ ...before, [key]: items, ...after }`, the items
 * serialized in slices (one `JSON.stringify` of a 1 MiB page blocks the event loop for several
 * ms). The items' texts are then written, also in slices, into one buffer of the reply's size:
 * joining them as one 1 MiB string, then encoding it to send, took another 5–20 ms in one piece,
 * and a buffer per item kept the garbage collector's young generation full.
 */
export async function jsonWithArrayInSlices(
  before: Record<string, unknown>,
  key: string,
  items: readonly unknown[],
  after: Record<string, unknown>,
): Promise<Buffer> {
  const head = JSON.stringify(before);
  const tail = JSON.stringify(after);
  const texts: string[] = [
    `${head === "{}" ? "{" : `${head.slice(0, -1)},`}${JSON.stringify(key)}:[`,
  ];
  let size = Buffer.byteLength(texts[0] as string);
  await inSlices(items.length, (index) => {
    // As in JSON.stringify of an array, an item that has no JSON text is written as null. The
    // comma is a text of its own: prefixed, it made a rope that measuring flattened (a copy).
    if (index > 0) texts.push(",");
    const text = JSON.stringify(items[index]) ?? "null";
    texts.push(text);
    size += Buffer.byteLength(text) + (index > 0 ? 1 : 0);
  });
  texts.push(tail === "{}" ? "]}" : `],${tail.slice(1)}`);
  size += Buffer.byteLength(texts[texts.length - 1] as string);
  const bytes = Buffer.allocUnsafe(size);
  let offset = 0;
  await inSlices(texts.length, (index) => {
    offset += bytes.write(texts[index] as string, offset);
  });
  return bytes;
}
