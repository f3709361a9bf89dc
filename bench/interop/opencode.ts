/**
 * OpenCode import throughput (issue 35 item 3: at least 0.3× the speed of reading the same files
 * with JSON.parse into values, measured in the same run; memory bounded by the largest session).
 * Generates a seeded folder of `opencode export` files from the real corpus
 * (test/fixtures/interop/opencode/export: its messages with their parts, copied in order from a
 * random start under new session ids), then, in this process, the faster of two runs of: the
 * JSON.parse baseline (every file, whole), the importer's own work (read and convert, no writes)
 * and the import into one package per session (durable writes through the archive) with one
 * thread and with the default threads. Prints MB/s, the ratio to the baseline and peak memory
 * beside the largest session.
 *
 *   node bin/run-ts.js bench/interop/opencode.ts [--sessions 100] [--megabytes 40] [--seed 35]
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { importIntoPackages } from "../../packages/library/src/interop/index.js";
import { importOpenCodeFile } from "../../packages/library/src/interop/opencode/import.js";
import { defaultImportJobs } from "../../packages/library/src/interop/source-names.js";
import { fasterOfTwo, seededRandom, throughputRow } from "./throughput-common.js";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "100" },
    megabytes: { type: "string", default: "40" },
    seed: { type: "string", default: "35" },
  },
});
const sessions = Number(values.sessions);
const megabytes = Number(values.megabytes);
const state = Number(values.seed);
if (!Number.isInteger(sessions) || sessions < 2 || !(megabytes > 0) || !Number.isInteger(state)) {
  process.stderr.write(
    "bench/interop/opencode: --sessions is a whole number ≥ 2, --megabytes a positive number, --seed a whole number\n",
  );
  process.exit(2);
}

const random = seededRandom(state);

type Json = Record<string, unknown>;
const corpus = new URL("../../test/fixtures/interop/opencode/export/", import.meta.url).pathname;
const real = readdirSync(corpus).map(
  (name) =>
    JSON.parse(readFileSync(join(corpus, name), "utf8")) as { info: Json; messages: Json[] },
);

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-opencode-"));
try {
  let total = 0;
  let largest = 0;
  const files: string[] = [];
  for (let index = 0; index < sessions; index++) {
    const target =
      (megabytes * 1e6 * (0.2 + random() * 1.6 + (random() < 0.05 ? 4 : 0))) / sessions;
    const source = real[index % real.length] ?? { info: {}, messages: [] };
    const id = `ses_bench${values.seed}x${index}`;
    const messages: string[] = [];
    let size = 0;
    for (let at = Math.floor(random() * source.messages.length); size < target; at++) {
      const text = JSON.stringify(source.messages[at % source.messages.length]);
      messages.push(text);
      size += text.length;
    }
    const text = `{"info":${JSON.stringify({ ...source.info, id })},"messages":[${messages.join(",")}]}`;
    const file = join(folder, `${id}.json`);
    writeFileSync(file, text);
    files.push(file);
    const bytes = Buffer.byteLength(text);
    total += bytes;
    largest = Math.max(largest, bytes);
  }
  const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
  process.stdout.write(
    `${files.length} OpenCode export files, ${mb(total)} MB, largest ${mb(largest)} MB (seed ${values.seed})\n`,
  );
  const best = fasterOfTwo;
  let sink = 0;
  const baseline = await best(() => {
    for (const file of files)
      sink += (JSON.parse(readFileSync(file, "utf8")) as { messages: Json[] }).messages.length;
  });
  const convert = await best(async () => {
    for (const file of files)
      sink += (await importOpenCodeFile(file, readFileSync(file))).account.lines;
  });
  let round = 0;
  const packages = await best(async () => {
    await importIntoPackages({
      source: "opencode",
      files,
      into: join(folder, `p-${round++}`),
      jobs: 1,
    });
  });
  const jobs = defaultImportJobs();
  const threaded = await best(async () => {
    await importIntoPackages({
      source: "opencode",
      files,
      into: join(folder, `p-${round++}`),
      jobs,
    });
  });
  const row = (name: string, seconds: number): string =>
    throughputRow(name, seconds, total, baseline);
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
