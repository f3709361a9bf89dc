#!/usr/bin/env node
// The `verbatim` command (compiled). `serve`, `keys` and `db migrate` come from the server
// package (verbatim-llm-server) when it is installed beside this one. Node's compile cache
// (in the system's temporary folder) keeps the compiled modules between runs: start-up is
// most of a short command's time (bench/cli). A command that reads a large conversation keeps
// V8's young generation small (src/cli/young-generation.ts), which saves about 1× the file's size.
import module from "node:module";

module.enableCompileCache?.();
const [{ main }, { keepYoungGenerationSmall }] = await Promise.all([
  import("../dist/cli/main.js"),
  import("../dist/cli/young-generation.js"),
]);
const argv = process.argv.slice(2);
keepYoungGenerationSmall(argv, process.cwd());
process.exitCode = await main(argv);
