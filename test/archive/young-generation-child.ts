// Run by young-generation.test.ts in a fresh process: gives the `verbatim` command's engine
// setting the command line `archive check <package>` for a package whose conversation.json is
// large or small (or `serve`, or nothing at all for "none"), keeps about 60 MB of new small
// strings alive, as reading a large conversation.json does, then prints whether the setting
// was applied and the size of V8's young generation ("new_space") in bytes.
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapSpaceStatistics } from "node:v8";
import {
  LARGE_CONVERSATION_BYTES,
  keepYoungGenerationSmall,
} from "../../packages/library/src/cli/young-generation.js";

const mode = process.argv[2];
const work = mkdtempSync(join(tmpdir(), "verbatim-young-generation-"));
mkdirSync(join(work, "agent"));
const file = join(work, "agent", "conversation.json");
writeFileSync(file, "");
truncateSync(file, mode === "small" ? 1024 : LARGE_CONVERSATION_BYTES);
const argv = mode === "serve" ? ["serve", work] : ["archive", "check", work];
const applied = mode === "none" ? false : keepYoungGenerationSmall(argv, process.cwd());
rmSync(work, { recursive: true });

const kept: string[] = [];
for (let index = 0; index < 300_000; index++) kept.push(`${index} `.repeat(20).slice(0, 100));
const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
process.stdout.write(
  JSON.stringify({ applied, kept: kept.length, newSpaceBytes: newSpace?.space_size ?? -1 }) + "\n",
);
