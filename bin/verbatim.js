#!/usr/bin/env node
// The `verbatim` command of this checkout: runs the TypeScript sources of the workspace packages
// through tsx (no build step, never stale). The published package runs its compiled dist/
// (packages/library/bin/verbatim.js).
import { register } from "node:module";
import { pathToFileURL, fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsx = await import("tsx/esm/api");
tsx.register();
register("./source-conditions.js", import.meta.url);
const cli = `${root}packages/library/src/cli/`;
const [{ main }, { keepYoungGenerationSmall }] = await Promise.all([
  import(pathToFileURL(`${cli}main.ts`).href),
  import(pathToFileURL(`${cli}young-generation.ts`).href),
]);
const argv = process.argv.slice(2);
keepYoungGenerationSmall(argv, process.cwd());
process.exitCode = await main(argv);
