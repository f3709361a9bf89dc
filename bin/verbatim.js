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
const { main } = await import(pathToFileURL(`${root}packages/library/src/cli/main.ts`).href);
process.exitCode = await main(process.argv.slice(2));
