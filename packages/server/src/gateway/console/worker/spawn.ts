import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { PageWorkerSettings } from "./protocol.js";

/**
 * Starts the console's worker thread on entry.js beside this file. Compiled (dist/), that is
 * the file itself. Run from the TypeScript sources (`node bin/run-ts.js`, Vitest), this file is
 * entry.ts's sibling .ts and a worker does not inherit the loader hooks of the thread that starts
 * it, so the worker first registers tsx and resolves the workspace packages to their sources
 * (the "verbatim-source" export condition), as bin/run-ts.js does.
 */
export function spawnPageWorker(settings: PageWorkerSettings): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) {
    return new Worker(new URL("./entry.js", here), { workerData: settings });
  }
  const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm/api")).href;
  const entry = new URL("./entry.ts", here).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, {
    eval: true,
    workerData: settings,
    execArgv: ["--conditions=verbatim-source"],
  });
}
