import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * Starts a worker thread on the module `name` (without its extension) beside `here` (the
 * caller's `import.meta.url`). Compiled (dist/), that is `name.js` itself. Run from the
 * TypeScript sources (`node bin/run-ts.js`, Vitest), `here` ends in `.ts` and a worker does not
 * inherit the loader hooks of the thread that starts it, so the worker first registers tsx and
 * resolves the workspace packages to their sources (the "verbatim-source" export condition), as
 * bin/run-ts.js does. Measured (2026-12-02, 2 cores): a worker loads in 0.14-0.19 s from dist/
 * and ~0.2 s from the sources with tsx's cache warm.
 */
export function spawnSiblingWorker(here: string, name: string, workerData: unknown): Worker {
  if (!here.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, here), { workerData });
  const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm/api")).href;
  const entry = new URL(`./${name}.ts`, here).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, {
    eval: true,
    workerData,
    execArgv: ["--conditions=verbatim-source"],
  });
}
