#!/usr/bin/env node
// `verbatim-llm-server` (and `npx verbatim-llm-server …`): the `verbatim` command with this
// package's commands (serve, keys, db migrate) installed beside the library's.
import { main } from "verbatim-llm/cli";

process.exitCode = await main(process.argv.slice(2));
