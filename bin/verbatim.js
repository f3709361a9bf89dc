#!/usr/bin/env node
// The `verbatim` command. In a checkout it runs the TypeScript sources through tsx (no build
// step, never stale); a published package that ships dist/ runs the compiled files.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const source = `${root}src/cli/main.ts`;
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  const { main } = await import(pathToFileURL(source).href);
  process.exitCode = await main(process.argv.slice(2));
} else {
  const { main } = await import(pathToFileURL(`${root}dist/cli/main.js`).href);
  process.exitCode = await main(process.argv.slice(2));
}
