#!/usr/bin/env node
// The `verbatim` command (compiled). `serve`, `keys` and `db migrate` come from the server
// package (verbatim-llm-server) when it is installed beside this one. Node's compile cache
// (in the system's temporary folder) keeps the compiled modules between runs: start-up is
// most of a short command's time (bench/cli).
import module from "node:module";

module.enableCompileCache?.();
const { main } = await import("../dist/cli/main.js");
process.exitCode = await main(process.argv.slice(2));
