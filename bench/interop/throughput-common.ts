/**
 * What the per-source import benchmarks (bench/interop/<source>.ts) share: a seeded generator,
 * the faster of two runs, and one printed row (seconds, MB/s, ratio to the JSON.parse baseline).
 */

/** mulberry32 from `seed`: every run writes the same corpus. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The faster of two runs, in seconds. */
export async function fasterOfTwo(run: () => Promise<void> | void): Promise<number> {
  let fastest = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 2; round++) {
    const start = performance.now();
    await run();
    fastest = Math.min(fastest, (performance.now() - start) / 1000);
  }
  return fastest;
}

/** One row: the phase, its seconds, its MB/s over `bytes`, and its ratio to `baseline`. */
export function throughputRow(
  name: string,
  seconds: number,
  bytes: number,
  baseline: number,
): string {
  const rate = `${(bytes / 1e6 / seconds).toFixed(1)} MB/s`;
  return `${name.padEnd(40)} ${seconds.toFixed(2).padStart(6)} s  ${rate.padStart(11)}  ${(baseline / seconds).toFixed(2)}× the baseline\n`;
}
