/**
 * How many runs a slow property test makes: its own count in the CI suite, more in a long run
 * (`npm run test:properties`, docs/performance.md, "Long property runs"), so a rare failing case
 * is found there before CI finds it at random.
 *
 *   const runs = propertyRuns(25);
 *   it("…", async () => { await fc.assert(property, runs.parameters); }, runs.timeout(120_000));
 *
 * - `VERBATIM_PROPERTY_RUNS=<n>` sets the number of runs (default: the test's own);
 * - `VERBATIM_PROPERTY_SEED=<seed>` and `VERBATIM_PROPERTY_PATH=<path>` replay the case a
 *   failure printed (fast-check's `seed` and `path`), stopping at its first failure.
 */
/** The fast-check parameters this sets (a subset of `fc.Parameters`). */
export interface RunParameters {
  readonly numRuns: number;
  readonly seed?: number;
  readonly path?: string;
  readonly endOnFailure?: boolean;
}

export interface PropertyRuns {
  readonly parameters: RunParameters;
  /** The test's timeout for its CI count, scaled to the runs made. */
  timeout(forDefaultRuns: number): number;
}

export function propertyRuns(defaultRuns: number): PropertyRuns {
  const runs = positiveInteger("VERBATIM_PROPERTY_RUNS") ?? defaultRuns;
  const seed = process.env["VERBATIM_PROPERTY_SEED"];
  const path = process.env["VERBATIM_PROPERTY_PATH"];
  const replay =
    seed === undefined || seed === ""
      ? {}
      : { seed: Number(seed), endOnFailure: true, ...(path ? { path } : {}) };
  return {
    parameters: { numRuns: runs, ...replay },
    timeout: (forDefaultRuns) =>
      Math.ceil((forDefaultRuns * Math.max(runs, defaultRuns)) / defaultRuns),
  };
}

function positiveInteger(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(text)}`);
  }
  return value;
}
