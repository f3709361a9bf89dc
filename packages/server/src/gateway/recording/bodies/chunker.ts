/**
 * Content-defined chunking (a gear hash, as in FastCDC): boundaries depend on the bytes around
 * them, not on where a run of bytes starts, so the same run (an image, a tool result sent
 * again) cuts into the same chunks wherever it moves in a body. Chunks are what the chunk index
 * finds again (docs/server/recorded-calls.md, "How recorded bytes are stored").
 */

/** No chunk is shorter (but the last of a region), so the index holds few rows per byte. */
export const MIN_CHUNK = 2048;
/** A boundary where the hash's top bits are zero: one in 2^11 positions past the minimum. */
const MASK = 0xffe00000 >>> 0;
export const MAX_CHUNK = 16384;

/** 256 fixed pseudo-random words (a splitmix-style sequence: the same on every run and machine). */
const GEAR: Uint32Array = (() => {
  const table = new Uint32Array(256);
  let state = 0x9e3779b9;
  for (let index = 0; index < 256; index++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    table[index] = (value ^ (value >>> 14)) >>> 0;
  }
  return table;
})();

/**
 * The end offsets of the chunks of `bytes[start, end)`, in order; the last is `end`. A region
 * shorter than MIN_CHUNK is one chunk.
 */
export function chunkEnds(bytes: Uint8Array, start = 0, end = bytes.length): number[] {
  const ends: number[] = [];
  let chunkStart = start;
  while (end - chunkStart > MIN_CHUNK) {
    const limit = Math.min(end, chunkStart + MAX_CHUNK);
    let hash = 0;
    let position = chunkStart + MIN_CHUNK;
    let cut = limit;
    // The hash only needs the last 32 bytes before a position: start it that far back.
    for (let index = position - 32; index < position; index++) {
      hash = ((hash << 1) + (GEAR[bytes[index] as number] as number)) >>> 0;
    }
    for (; position < limit; position++) {
      hash = ((hash << 1) + (GEAR[bytes[position] as number] as number)) >>> 0;
      if ((hash & MASK) === 0) {
        cut = position + 1;
        break;
      }
    }
    ends.push(cut);
    chunkStart = cut;
  }
  if (chunkStart < end) ends.push(end);
  return ends;
}
