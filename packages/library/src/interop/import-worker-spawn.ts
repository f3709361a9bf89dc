import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { ImportWorkerData } from "./import-threads.js";

/**
 * Starts an import worker on import-worker.js beside this file. Compiled (dist/), that is the
 * file itself. Run from the TypeScript sources (`node bin/run-ts.js`, Vitest), a worker does not
 * inherit the loader hooks of the thread that starts it, so it first registers tsx and resolves
 * the workspace packages to their sources (the "verbatim-source" export condition), as
 * bin/run-ts.js does. Measured (2026-12-02, 2 cores): a worker loads (and ends, given no file)
 * in 0.14-0.19 s from dist/ and ~0.2 s from the sources with tsx's cache warm; the main thread
 * imports files meanwhile.
 */
export function spawnImportWorker(data: ImportWorkerData): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) {
    return new Worker(new URL("./import-worker.js", here), { workerData: data });
  }
  const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm/api")).href;
  const entry = new URL("./import-worker.ts", here).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, {
    eval: true,
    workerData: data,
    execArgv: ["--conditions=verbatim-source"],
  });
}
