// The floor under a cold read of the 10,000-deep "tool turns" context (bench/store/run.ts):
// the same rows read with better-sqlite3 alone, step by step, beside the store's cold read
// (readContext without message cache) in the same run: selecting the content as bytes,
// decoding those bytes into strings, selecting it as strings (both at once), and JSON.parse.
// Run: node bin/run-ts.js bench/store/cold-read-floor.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { generateConversation } from "../workload/conversation.js";

const DEPTH = 10_000;
const SAMPLES = 7;
const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-cold-read-"));
const path = join(folder, "bench.sqlite");
const median = (samples: number[]) =>
  [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? Number.NaN;
const timed = (work: () => unknown) => {
  const started = performance.now();
  work();
  return performance.now() - started;
};
const database = await openDatabase({ dialect: "sqlite", path });
try {
  await migrateDatabase(database);
  const messages = generateConversation({ turns: DEPTH / 4, seed: 1, imageEvery: 0 }).conversation
    .history;
  const store = new GatewayMessageStore(database, { cacheBytes: 0 });
  let anchor: string | null = null;
  for (let start = 0; start < messages.length; start += 256) {
    const written = await store.appendMessages("bench", {
      previousMessageId: anchor,
      messages: messages
        .slice(start, start + 256)
        .map((message) => ({ role: message.role, content: message.content })),
    });
    anchor = written[written.length - 1]?.id ?? null;
  }
  const raw = new Database(path, { readonly: true });
  raw.pragma("cache_size = -65536");
  const where = "from ai_gateway_messages where subject_uid = 'bench' order by depth";
  const asStrings = raw.prepare(`select content ${where}`).pluck();
  const asBytes = raw.prepare(`select cast(content as blob) ${where}`).pluck();
  const rows: Record<string, number[]> = {
    "store: readContext, no message cache": [],
    "driver: select the content as bytes": [],
    "driver: decode those bytes into strings (Buffer#toString)": [],
    "driver: select the content as strings": [],
    "JSON.parse of every content string": [],
  };
  let characters = 0;
  let bytes = 0;
  for (let sample = 0; sample < SAMPLES; sample++) {
    const started = performance.now();
    const context = await store.readContext("bench", anchor ?? "");
    rows["store: readContext, no message cache"]?.push(performance.now() - started);
    if (context.messages.length !== DEPTH) throw new Error("wrong context length");
    let buffers: Buffer[] = [];
    rows["driver: select the content as bytes"]?.push(
      timed(() => (buffers = asBytes.all() as Buffer[])),
    );
    bytes = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    rows["driver: decode those bytes into strings (Buffer#toString)"]?.push(
      timed(() => buffers.map((buffer) => buffer.toString("utf8"))),
    );
    let texts: string[] = [];
    rows["driver: select the content as strings"]?.push(
      timed(() => (texts = asStrings.all() as string[])),
    );
    characters = texts.reduce((sum, text) => sum + text.length, 0);
    rows["JSON.parse of every content string"]?.push(
      timed(() => texts.map((text) => JSON.parse(text) as unknown)),
    );
  }
  raw.close();
  const baseline = median(rows["store: readContext, no message cache"] ?? []);
  process.stdout.write(
    `cold read of the ${DEPTH.toLocaleString("en")}-deep tool-turn context on SQLite ` +
      `(${(bytes / 1e6).toFixed(1)} MB of content, ${(characters / 1e6).toFixed(1)} M characters), ` +
      `medians of ${SAMPLES}\n\n| step | median | vs the store's read |\n| --- | ---: | ---: |\n`,
  );
  for (const [name, samples] of Object.entries(rows)) {
    const value = median(samples);
    process.stdout.write(
      `| ${name} | ${value.toFixed(1)} ms | ${(value / baseline).toFixed(2)}× |\n`,
    );
  }
} finally {
  await database.close();
  rmSync(folder, { recursive: true, force: true });
}
