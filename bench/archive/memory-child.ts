// Run in a fresh process by bench/archive/memory.ts: one case on one package, then prints the
// process's peak resident set size as one JSON line: VmHWM of /proc/self/status on Linux, as
// process.resourceUsage().maxRSS there also counts the parent's resident memory at the fork
// that started this process (it carries over exec); maxRSS elsewhere.
//
// With --as-command, the process first applies the `verbatim` executable's engine setting for
// `archive resave <package>` (cli/young-generation.ts), as the command does before it runs.
//
//   node bin/run-ts.js bench/archive/memory-child.ts <case> <package folder> [--as-command]
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { keepYoungGenerationSmall } from "../../packages/library/src/cli/young-generation.js";
import { decodeConversation } from "../../packages/library/src/format/decode.js";

const [which = "", packageDir = "", asCommand] = process.argv.slice(2);
const file = join(packageDir, "agent", "conversation.json");
if (
  asCommand === "--as-command" &&
  !keepYoungGenerationSmall(["archive", "resave", packageDir], process.cwd())
) {
  throw new Error("the verbatim command's setting did not apply to this package");
}

async function run(): Promise<string> {
  switch (which) {
    case "baseline":
      return "nothing";
    case "parse": {
      // The floor: the file read as text and given to the engine's JSON.parse, nothing else.
      const value = JSON.parse(await readFile(file, "utf8")) as { history: unknown[] };
      return `${value.history.length} messages`;
    }
    case "decode": {
      // The format's decoder alone (JSON.parse, its checks and the schema's copy).
      const decoded = decodeConversation(await readFile(file));
      return decoded.ok ? `${decoded.conversation.history.length} messages` : "unreadable";
    }
    case "open": {
      const opened = await openArchive(packageDir);
      return `${opened.conversation.history.length} messages`;
    }
    case "open+unchanged save": {
      const opened = await openArchive(packageDir);
      const result = await opened.archive.save(opened.conversation, opened.images);
      return `${result.outcome}, ${result.bytesWritten} bytes`;
    }
    case "open+save of a change": {
      const opened = await openArchive(packageDir);
      const conversation = { ...opened.conversation, model: `${opened.conversation.model}-2` };
      const result = await opened.archive.save(conversation, opened.images);
      return `${result.outcome}, ${result.bytesWritten} bytes`;
    }
    default:
      throw new Error(`unknown case ${which}`);
  }
}

/** This process's own peak resident set size, in bytes. */
function peakResidentBytes(): number {
  try {
    const status = readFileSync("/proc/self/status", "utf8");
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
    if (match?.[1] !== undefined) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: getrusage's figure.
  }
  return process.resourceUsage().maxRSS * 1024;
}

const outcome = await run();
process.stdout.write(
  JSON.stringify({
    case: which,
    outcome,
    maxRssBytes: peakResidentBytes(),
    resourceUsageMaxRssBytes: process.resourceUsage().maxRSS * 1024,
  }) + "\n",
);
