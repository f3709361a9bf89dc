/**
 * What rows an import leaves pending for the console's search index cost (issue 19): the
 * search's time with no pending row (the index alone), with `--rows` pending rows (the index plus
 * a scan of those rows with the index's fold), and once a server started on the store has
 * indexed them in the background: how long that took, the event loop's longest block meanwhile
 * (monitorEventLoopDelay) and the slowest /healthz answer, polled back to back; then the same
 * pace without a server, with the main thread's CPU time per transaction.
 *
 *   node bin/run-ts.js bench/interop/search-pending.ts [--rows 20000] [--size 1000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { startServer } from "../../packages/server/src/server/serve.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { searchConsole } from "../../packages/server/src/store/repositories/console-search.js";
import {
  catchUpSearchIndex,
  deferSearchIndex,
  pendingSearchDeferrals,
  SERVER_CATCH_UP_PACE,
} from "../../packages/server/src/store/search-deferral.js";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "20000" },
    size: { type: "string", default: "1000" },
  },
});
const rows = Number(values.rows);
const size = Number(values.size);

/** `count` rows of about `size` bytes each after the chain of a message of subject `subject`. */
async function addRows(database: StoreDatabase, subject: string, count: number): Promise<void> {
  const [first] = await new GatewayMessageStore(database).appendMessages(subject, {
    previousMessageId: null,
    messages: [{ role: "user", content: [{ type: "text", text: `first row of ${subject}` }] }],
  });
  const filler = "lorem ipsum dolor sit amet ".repeat(Math.ceil(size / 27)).slice(0, size);
  await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count - 1})
    insert into ai_gateway_messages (id, subject_uid, conversation_id, previous_message_id, type,
      role, status, content, metadata, branch_id, depth, context_start_depth, created_at, updated_at)
    select ${subject} || '-' || i, subject_uid, conversation_id, null, type, role, status,
      json_array(json_object('type', 'text', 'text', 'row ' || i || ' ' || ${filler})),
      metadata, branch_id, depth + i, context_start_depth, created_at, updated_at
    from ai_gateway_messages, n where id = ${first?.id ?? ""}`.execute(database.db);
}

async function searchMs(database: StoreDatabase, query: string): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < 9; run++) {
    const started = performance.now();
    await searchConsole(database.db, database.capabilities, { query, limit: 50 });
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[4] ?? 0;
}

/** This thread's CPU time (Node 24's process.threadCpuUsage, not in the repository's Node types). */
const threadCpu = (
  process as unknown as { threadCpuUsage(previous?: NodeJS.CpuUsage): NodeJS.CpuUsage }
).threadCpuUsage.bind(process);

const folder = mkdtempSync(join(tmpdir(), "verbatim-bench-search-pending-"));
const path = join(folder, "store.sqlite");
try {
  const database = await openDatabase({ dialect: "sqlite", path }, { poolSize: 1 });
  await migrateDatabase(database);
  await addRows(database, "indexed", rows);
  const queries = ["row 12345 lorem", "nothing holds this"];
  const line = (label: string, times: number[]): string =>
    `${label}: ${queries.map((query, index) => `"${query}" ${times[index]?.toFixed(1)} ms`).join(", ")} (median of 9)\n`;
  const times = async () => Promise.all(queries.map((query) => searchMs(database, query)));
  process.stdout.write(line(`search, ${rows} rows indexed, none pending`, await times()));
  const deferral = await deferSearchIndex(database);
  await addRows(database, "pending", rows);
  await deferral.finish();
  process.stdout.write(line(`search, ${rows} indexed + ${rows} pending`, await times()));
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const server = await startServer({
    database: path,
    port: 0,
    env: { VERBATIM_WEB_BUILD: "off", VERBATIM_OPERATOR_TOKEN: "vop_bench" },
  });
  histogram.enable();
  const started = performance.now();
  let slowest = 0;
  let answers = 0;
  while ((await pendingSearchDeferrals(database)) > 0) {
    const asked = performance.now();
    const reply = await fetch(`${server.url}/healthz`);
    await reply.arrayBuffer();
    slowest = Math.max(slowest, performance.now() - asked);
    answers++;
  }
  const seconds = (performance.now() - started) / 1000;
  histogram.disable();
  await server.close();
  process.stdout.write(
    `server catch-up of ${rows} rows (${((rows * size) / 1e6).toFixed(1)} MB of text): ${seconds.toFixed(2)} s; ` +
      `${answers} /healthz answers meanwhile, slowest ${slowest.toFixed(1)} ms; ` +
      `event loop delay max ${(histogram.max / 1e6).toFixed(1)} ms, p99 ${(histogram.percentile(99) / 1e6).toFixed(1)} ms\n`,
  );
  process.stdout.write(line(`search, ${rows * 2} rows indexed, none pending`, await times()));
  // The same server with nothing to catch up, polled as long: what the machine and the server's
  // start cost without it.
  const idle = monitorEventLoopDelay({ resolution: 1 });
  const quiet = await startServer({
    database: path,
    port: 0,
    env: { VERBATIM_WEB_BUILD: "off", VERBATIM_OPERATOR_TOKEN: "vop_bench" },
  });
  idle.enable();
  let idleSlowest = 0;
  const idleUntil = performance.now() + seconds * 1000;
  while (performance.now() < idleUntil) {
    const asked = performance.now();
    await (await fetch(`${quiet.url}/healthz`)).arrayBuffer();
    idleSlowest = Math.max(idleSlowest, performance.now() - asked);
  }
  idle.disable();
  await quiet.close();
  process.stdout.write(
    `the same server with nothing pending, ${seconds.toFixed(2)} s of /healthz back to back: slowest ${idleSlowest.toFixed(1)} ms; ` +
      `event loop delay max ${(idle.max / 1e6).toFixed(1)} ms, p99 ${(idle.percentile(99) / 1e6).toFixed(1)} ms\n`,
  );
  // The same pace without a server: the main thread's CPU time of each transaction.
  const again = await deferSearchIndex(database);
  await addRows(database, "again", rows);
  await again.finish();
  const cpu: number[] = [];
  let before = threadCpu();
  const total = threadCpu();
  const report = await catchUpSearchIndex(database, {
    ...SERVER_CATCH_UP_PACE,
    pause: async () => {
      const used = threadCpu(before);
      cpu.push((used.user + used.system) / 1000);
      await new Promise((resolve) => setImmediate(resolve));
      before = threadCpu();
    },
  });
  const used = threadCpu(total);
  cpu.sort((a, b) => a - b);
  process.stdout.write(
    `catch-up at the server's pace (${SERVER_CATCH_UP_PACE.rows} rows or ${SERVER_CATCH_UP_PACE.bytes / 1024} KiB, ` +
      `merges of ${(SERVER_CATCH_UP_PACE as { mergePages?: number }).mergePages ?? "no"} pages), ${rows} rows: ` +
      `${report.transactions} transactions, ${((used.user + used.system) / 1e6).toFixed(2)} s CPU; CPU per transaction ` +
      `median ${cpu[Math.floor(cpu.length / 2)]?.toFixed(1)} ms, max ${cpu.at(-1)?.toFixed(1)} ms; longest wall ${report.longestMs.toFixed(1)} ms\n`,
  );
  await database.close();
} finally {
  rmSync(folder, { recursive: true, force: true });
}
