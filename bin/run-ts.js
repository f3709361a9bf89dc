#!/usr/bin/env node
// Runs a TypeScript file of this checkout (benchmarks, examples) with tsx: `node bin/run-ts.js FILE [args]`.
// Package imports resolve to the workspace packages' sources (bin/source-conditions.js).
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const [file, ...rest] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write("usage: node bin/run-ts.js <file.ts> [args…]\n");
  process.exit(2);
}
process.argv = [process.argv[0] ?? "node", resolve(file), ...rest];
const tsx = await import("tsx/esm/api");
tsx.register();
register("./source-conditions.js", import.meta.url);
await import(pathToFileURL(resolve(file)).href);
