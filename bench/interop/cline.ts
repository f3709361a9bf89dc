/**
 * Cline import throughput (issue 35 item 3: at least 0.3× the speed of reading the same files
 * with JSON.parse into values, measured in the same run; memory bounded by the largest task).
 * Generates a seeded `tasks/` folder of task folders from the real corpus
 * (test/fixtures/interop/cline, Roo Code folders: no real Cline folder may be redistributed,
 * SOURCES.md "Gaps"; its API histories and UI messages, copied in order from a
 * random start under new task ids), then, in this process, the faster of two runs of: the
 * JSON.parse baseline (every file of every task folder, whole), the importer's own work (read
 * and convert, no writes) and the import into one package per task (durable writes through the
 * archive) with one thread and with the default threads. Prints MB/s, the ratio to the baseline
 * and peak memory beside the largest task.
 *
 *   node bin/run-ts.js bench/interop/cline.ts [--tasks 100] [--megabytes 40] [--seed 35]
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { importClineTask } from "../../packages/library/src/interop/cline/import.js";
import { importIntoPackages } from "../../packages/library/src/interop/index.js";
import { listSourceFiles } from "../../packages/library/src/interop/source-files.js";
import { acceptsFile, defaultImportJobs } from "../../packages/library/src/interop/source-names.js";
import { fasterOfTwo, seededRandom, throughputRow } from "./throughput-common.js";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "100" },
    megabytes: { type: "string", default: "40" },
    seed: { type: "string", default: "35" },
  },
});
const tasks = Number(values.tasks);
const megabytes = Number(values.megabytes);
const state = Number(values.seed);
if (!Number.isInteger(tasks) || tasks < 2 || !(megabytes > 0) || !Number.isInteger(state)) {
  process.stderr.write(
    "bench/interop/cline: --tasks is a whole number ≥ 2, --megabytes a positive number, --seed a whole number\n",
  );
  process.exit(2);
}

const random = seededRandom(state);

type Json = Record<string, unknown>;
const corpus = new URL("../../test/fixtures/interop/cline/", import.meta.url).pathname;
const sources = readdirSync(corpus).flatMap((kind) =>
  readdirSync(join(corpus, kind)).map((task) => join(corpus, kind, task)),
);
const read = (file: string): Json[] => {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Json[];
  } catch {
    return [];
  }
};
const real = sources.map((task) => ({
  api: read(join(task, "api_conversation_history.json")),
  ui: read(join(task, "ui_messages.json")),
}));

/** Entries of `list` in order from a random start until `bytes`, as JSON text. */
function slice(list: Json[], bytes: number): string {
  if (list.length === 0) return "[]";
  const out: string[] = [];
  let size = 0;
  for (let at = Math.floor(random() * list.length); size < bytes; at++) {
    const text = JSON.stringify(list[at % list.length]);
    out.push(text);
    size += text.length;
  }
  return `[${out.join(",")}]`;
}

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-cline-"));
try {
  let total = 0;
  let largest = 0;
  for (let index = 0; index < tasks; index++) {
    const size = (megabytes * 1e6 * (0.2 + random() * 1.6 + (random() < 0.05 ? 4 : 0))) / tasks;
    const source = real[index % real.length] ?? { api: [], ui: [] };
    const task = join(folder, "tasks", `bench-${values.seed}-${index}`);
    mkdirSync(task, { recursive: true });
    const api = slice(source.api, size * 0.5);
    const ui = slice(source.ui, size * 0.5);
    writeFileSync(join(task, "api_conversation_history.json"), api);
    writeFileSync(join(task, "ui_messages.json"), ui);
    const bytes = Buffer.byteLength(api) + Buffer.byteLength(ui);
    total += bytes;
    largest = Math.max(largest, bytes);
  }
  const files = await listSourceFiles(folder, [join(folder, "tasks")], (name, path) =>
    acceptsFile("cline", name, path),
  );
  const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);
  process.stdout.write(
    `${files.length} Cline and Roo Code task folders, ${mb(total)} MB, largest ${mb(largest)} MB (seed ${values.seed})\n`,
  );
  const best = fasterOfTwo;
  let sink = 0;
  const baseline = await best(() => {
    for (const file of files) {
      for (const name of ["api_conversation_history.json", "ui_messages.json"]) {
        sink += (JSON.parse(readFileSync(join(dirname(file), name), "utf8")) as Json[]).length;
      }
    }
  });
  const convert = await best(() => {
    for (const file of files) sink += importClineTask(file, readFileSync(file)).account.lines;
  });
  let round = 0;
  const packages = await best(async () => {
    await importIntoPackages({
      source: "cline",
      files,
      into: join(folder, `p-${round++}`),
      jobs: 1,
    });
  });
  const jobs = defaultImportJobs();
  const threaded = await best(async () => {
    await importIntoPackages({ source: "cline", files, into: join(folder, `p-${round++}`), jobs });
  });
  const row = (name: string, seconds: number): string =>
    throughputRow(name, seconds, total, baseline);
  process.stdout.write(row("JSON.parse baseline", baseline));
  process.stdout.write(row("read and convert (no writes)", convert));
  process.stdout.write(row("import into packages (--jobs 1)", packages));
  process.stdout.write(row(`import into packages (--jobs ${jobs})`, threaded));
  process.stdout.write(
    `peak memory (RSS) ${mb(process.resourceUsage().maxRSS * 1024)} MB, largest task ${mb(largest)} MB${sink < 0 ? "" : ""}\n`,
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
