#!/usr/bin/env node
// `verbatim-llm-server` (and `npx verbatim-llm-server …`): the `verbatim` command with this
// package's commands (serve, keys, db migrate) installed beside the library's. Node's compile
// cache keeps the compiled modules between runs.
import module from "node:module";

module.enableCompileCache?.();
const { main } = await import("verbatim-llm/cli");
process.exitCode = await main(process.argv.slice(2));
