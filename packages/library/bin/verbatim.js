#!/usr/bin/env node
// The `verbatim` command (compiled). `serve`, `keys` and `db migrate` come from the server
// package (verbatim-llm-server) when it is installed beside this one.
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
