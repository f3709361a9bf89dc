/**
 * Gemini CLI import throughput (issue 35 item 3: at least 0.3× the speed of reading the same
 * files with JSON.parse into values, measured in the same run; memory bounded by the largest
 * session). Generates a seeded ~/.gemini of sessions in both layouts (`session-*.jsonl` and
 * `session-*.json`) from the messages of the real corpus (test/fixtures/interop/gemini-cli,
 * copied with new ids), then, in this process, the faster of two runs of: the JSON.parse
 * baseline (each `.json` whole, each `.jsonl` line by line), the importer's own work (read and
 * convert, no writes) and the import into one package per session (durable writes through
 * the archive) with one thread and with the default threads (the main thread and worker
 * threads taking whole files, as `verbatim import … --jobs N` does). Prints MB/s, the ratio to the baseline and peak memory beside
 * the largest session.
 *
 *   node bin/run-ts.js bench/interop/gemini-cli.ts [--sessions 200] [--megabytes 40] [--seed 35]
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { importGeminiCliFile } from "../../packages/library/src/interop/gemini-cli/import.js";
import { importIntoPackages } from "../../packages/library/src/interop/index.js";
import { listSourceFiles } from "../../packages/library/src/interop/source-files.js";
import { acceptsFile, defaultImportJobs } from "../../packages/library/src/interop/source-names.js";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "200" },
    megabytes: { type: "string", default: "40" },
    seed: { type: "string", default: "35" },
  },
});
const sessions = Number(values.sessions);
const megabytes = Number(values.megabytes);
let seed = Number(values.seed);
if (!Number.isInteger(sessions) || sessions < 2 || !(megabytes > 0) || !Number.isInteger(seed)) {
  process.stderr.write(
    "bench/interop/gemini-cli: --sessions is a whole number ≥ 2, --megabytes a positive number, --seed a whole number\n",
  );
  process.exit(2);
}

/** A small seeded generator (mulberry32), so that every run writes the same corpus. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

type Json = Record<string, unknown>;
const corpusFolder = new URL("../../test/fixtures/interop/gemini-cli/", import.meta.url).pathname;
const realMessages: Json[] = [];
for (const folder of readdirSync(corpusFolder)) {
  for (const name of readdirSync(join(corpusFolder, folder))) {
    const session = JSON.parse(readFileSync(join(corpusFolder, folder, name), "utf8")) as Json;
    realMessages.push(...((session.messages as Json[] | undefined) ?? []));
  }
}

/** One session's messages from the real ones in order from a random start, with new ids. */
function sessionMessages(targetBytes: number, index: number): Json[] {
  const messages: Json[] = [];
  let bytes = 0;
  let at = Math.floor(random() * realMessages.length);
  while (bytes < targetBytes) {
    const message = realMessages[at % realMessages.length] as Json;
    const copy = { ...message, id: `m-${index}-${messages.length}` };
    messages.push(copy);
    bytes += JSON.stringify(copy).length;
    at++;
  }
  return messages;
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-gemini-"));
try {
  const chats = join(folder, ".gemini", "tmp", "bench", "chats");
  mkdirSync(chats, { recursive: true });
  let total = 0;
  let largest = 0;
  for (let index = 0; index < sessions; index++) {
    // Sizes spread around the mean, a few sessions several times larger.
    const size = (megabytes * 1e6 * (0.2 + random() * 1.6 + (random() < 0.05 ? 4 : 0))) / sessions;
    const sessionId = `bench-${seed}-${index}`;
    const header = { sessionId, projectHash: "bench", startTime: "t", lastUpdated: "t" };
    const messages = sessionMessages(size, index);
    const jsonl = index % 2 === 0;
    const text = jsonl
      ? [
          { ...header, kind: "main" },
          ...messages.flatMap((m) => [m, { $set: { lastUpdated: "t" } }]),
        ]
          .map((line) => JSON.stringify(line))
          .join("\n") + "\n"
      : JSON.stringify({ ...header, messages }, null, 2);
    const name = `session-2026-05-01T10-00-${String(index).padStart(8, "0")}.${jsonl ? "jsonl" : "json"}`;
    writeFileSync(join(chats, name), text);
    total += Buffer.byteLength(text);
    largest = Math.max(largest, Buffer.byteLength(text));
  }
  const files = await listSourceFiles(folder, [join(folder, ".gemini")], (name, path) =>
    acceptsFile("gemini-cli", name, path),
  );
  const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
  process.stdout.write(
    `${files.length} Gemini CLI sessions (half .jsonl, half .json), ${mb(total)} MB, largest ${mb(largest)} MB (seed ${values.seed})\n`,
  );
  const best = async (run: () => Promise<void> | void): Promise<number> => {
    let fastest = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 2; round++) {
      const start = performance.now();
      await run();
      fastest = Math.min(fastest, (performance.now() - start) / 1000);
    }
    return fastest;
  };
  let sink = 0;
  const baseline = await best(() => {
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      if (file.endsWith(".json")) sink += Object.keys(JSON.parse(text) as Json).length;
      else
        for (const line of text.split("\n"))
          if (line !== "") sink += Object.keys(JSON.parse(line) as Json).length;
    }
  });
  const convert = await best(() => {
    for (const file of files) sink += importGeminiCliFile(file, readFileSync(file)).account.lines;
  });
  let round = 0;
  const packages = await best(async () => {
    const into = join(folder, `packages-${round++}`);
    await importIntoPackages({ source: "gemini-cli", files, into, jobs: 1 });
  });
  const jobs = defaultImportJobs();
  const threaded = await best(async () => {
    const into = join(folder, `packages-${round++}`);
    await importIntoPackages({ source: "gemini-cli", files, into, jobs });
  });
  const rate = (seconds: number): string => `${(total / 1e6 / seconds).toFixed(1)} MB/s`;
  const row = (name: string, seconds: number): string =>
    `${name.padEnd(40)} ${seconds.toFixed(2).padStart(6)} s  ${rate(seconds).padStart(11)}  ${(baseline / seconds).toFixed(2)}× the baseline\n`;
  process.stdout.write(row("JSON.parse baseline", baseline));
  process.stdout.write(row("read and convert (no writes)", convert));
  process.stdout.write(row("import into packages (--jobs 1)", packages));
  process.stdout.write(row(`import into packages (--jobs ${jobs})`, threaded));
  process.stdout.write(
    `peak memory (RSS) ${mb(process.resourceUsage().maxRSS * 1024)} MB, largest session ${mb(largest)} MB${sink < 0 ? "" : ""}\n`,
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
