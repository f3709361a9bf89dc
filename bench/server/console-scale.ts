/**
 * The console's lists and search at scale (issue 34, item 4; docs/scale.md, "Lists and search"):
 * a store of N messages (default 1,000,000; `--quick` 100,000) in conversations of 20 across
 * 1,000 subjects, each message a dozen words of a 2,000-word vocabulary, on SQLite (FTS5
 * trigram index) and PostgreSQL (pg_trgm GIN index). Timed, p50 of 15 runs each, through the
 * store's own queries:
 * - the conversation list's page of 50: the first, and the page after the row at a depth of
 *   1 %, 50 % and 99.9 % of the list, of everyone and of one subject; beside it the baseline,
 *   the list as it was read before (messages counted per page, `OFFSET` to the same depth);
 * - search for a word in 1 % of the messages, one in 0.1 %, a common one in 5 %, one just too
 *   rare to fill a page among the newest rows tried first (the slowest), and a phrase of two
 *   common words: the first page and the page after the 2,000th match (or the last page,
 *   when there are fewer); beside it
 *   the baseline, the same search with `OFFSET` (and on PostgreSQL without the trigram index,
 *   as before migration 0017).
 * Goals: a list page p50 < 20 ms at any depth; search p50 < 50 ms for a word, < 100 ms for a
 * phrase, any page.
 *
 *   node bin/run-ts.js bench/server/console-scale.ts [--quick] [--messages N] [--dialects sqlite,postgres] [--explain] [--probe-rows N]
 *
 * `--explain`: PostgreSQL's plans (`EXPLAIN ANALYZE, BUFFERS`) of the statements each search page runs, on stderr.
 */
import { parseArgs } from "node:util";
import { CompiledQuery, sql, type Insertable, type Kysely } from "kysely";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import {
  listConversations,
  type ListKey,
} from "../../packages/server/src/store/repositories/console-queries.js";
import { PROBE_ROWS } from "../../packages/server/src/store/repositories/console-search-probe.js";
import {
  searchConsole,
  type SearchKey,
} from "../../packages/server/src/store/repositories/console-search.js";
import type { StoreSchema } from "../../packages/server/src/store/schema.js";
import { freshDatabase, type TestDialect } from "../../test/support/databases.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    messages: { type: "string" },
    dialects: { type: "string", default: "sqlite,postgres" },
    explain: { type: "boolean", default: false },
    "probe-rows": { type: "string" },
  },
});
const MESSAGES = Number(values.messages ?? (values.quick ? 100_000 : 1_000_000));
const PER_CONVERSATION = 20;
const CONVERSATIONS = Math.ceil(MESSAGES / PER_CONVERSATION);
const SUBJECTS = 1000;
const WORDS = 2000;
const WORDS_PER_MESSAGE = 12;
const RUNS = 15;
const PAGE = 50;
/** The newest rows a search tries first (the store's default unless `--probe-rows`). */
const PROBE = Number(values["probe-rows"] ?? PROBE_ROWS);
if (!Number.isInteger(PROBE) || PROBE < 0) {
  process.stderr.write(`--probe-rows: "${values["probe-rows"]}" is not a whole number ≥ 0\n`);
  process.exit(2);
}
const dialects = (values.dialects ?? "").split(",").filter(Boolean) as TestDialect[];

function log(text: string): void {
  process.stderr.write(`[console-scale] ${text}\n`);
}

/** A seeded xorshift generator: the same store on every run and both databases. */
function generator(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
}

const random = generator(20261206);
const LETTERS = "bcdfghjklmnpqrstvwxz";
const VOWELS = "aeiou";
/** Pronounceable words of 7 letters, distinct, none a part of another at a word boundary. */
const vocabulary: string[] = [];
for (const seen = new Set<string>(); vocabulary.length < WORDS;) {
  let word = "";
  for (let index = 0; index < 7; index++) {
    const from = index % 2 === 0 ? LETTERS : VOWELS;
    word += from[Math.floor(random() * from.length)];
  }
  if (!seen.has(word)) {
    seen.add(word);
    vocabulary.push(word);
  }
}
/** Word ranks by a Zipf-like law: a few common words, a long tail of rare ones. */
const weights = vocabulary.map((_, rank) => 1 / (rank + 1) ** 0.8);
const total = weights.reduce((sum, weight) => sum + weight, 0);
const cumulative: number[] = [];
weights.reduce((sum, weight) => {
  cumulative.push((sum + weight) / total);
  return sum + weight;
}, 0);
/** The word whose share of the messages is nearest `share` (each message has a dozen words). */
function wordIn(share: number): string {
  let best = 0;
  const shareOf = (rank: number) =>
    1 - (1 - (weights[rank] as number) / total) ** WORDS_PER_MESSAGE;
  for (let rank = 1; rank < WORDS; rank++) {
    if (Math.abs(shareOf(rank) - share) < Math.abs(shareOf(best) - share)) best = rank;
  }
  return vocabulary[best] as string;
}

function pickWord(): string {
  const at = random();
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((cumulative[middle] as number) < at) low = middle + 1;
    else high = middle;
  }
  return vocabulary[low] as string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const START = Date.parse("2025-01-01T00:00:00.000Z");
/** Conversations start 10 minutes apart; their messages 10 seconds apart. */
const conversationTime = (index: number) => START + index * 600_000;

async function seed(database: StoreDatabase): Promise<void> {
  const db = database.db as Kysely<StoreSchema>;
  const batch = 500;
  const started = performance.now();
  for (let first = 0; first < CONVERSATIONS; first += batch) {
    const last = Math.min(CONVERSATIONS, first + batch);
    const conversations: Insertable<StoreSchema["ai_gateway_conversations"]>[] = [];
    const branches: Insertable<StoreSchema["ai_gateway_branches"]>[] = [];
    const messages: Insertable<StoreSchema["ai_gateway_messages"]>[] = [];
    for (let index = first; index < last; index++) {
      const id = `c${String(index).padStart(8, "0")}`;
      const subject = `s${String(index % SUBJECTS).padStart(4, "0")}`;
      const at = conversationTime(index);
      conversations.push({ id, subject_uid: subject, created_at: iso(at), metadata: "{}" });
      branches.push({
        id: `b${id}`,
        subject_uid: subject,
        conversation_id: id,
        parent_branch_id: null,
        fork_depth: -1,
        tip_depth: PER_CONVERSATION - 1,
        created_at: iso(at),
      });
      for (let depth = 0; depth < PER_CONVERSATION; depth++) {
        const words = Array.from({ length: WORDS_PER_MESSAGE }, pickWord).join(" ");
        const time = iso(at + depth * 10_000);
        messages.push({
          id: `m${id}-${String(depth).padStart(2, "0")}`,
          subject_uid: subject,
          conversation_id: id,
          previous_message_id: null,
          type: "message",
          role: depth % 2 === 0 ? "user" : "assistant",
          status: "completed",
          content: JSON.stringify([{ type: "text", text: words }]),
          metadata: "{}",
          branch_id: `b${id}`,
          depth,
          context_start_depth: 0,
          created_at: time,
          updated_at: time,
        });
      }
    }
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("ai_gateway_conversations").values(conversations).execute();
      await trx.insertInto("ai_gateway_branches").values(branches).execute();
      for (let start = 0; start < messages.length; start += 1000) {
        await trx
          .insertInto("ai_gateway_messages")
          .values(messages.slice(start, start + 1000))
          .execute();
      }
    });
    if (first % 10_000 === 0) {
      log(
        `${database.capabilities.dialect}: ${(last * PER_CONVERSATION).toLocaleString("en")} messages (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    }
  }
  await sql`analyze`.execute(db);
}

async function p50(work: () => Promise<unknown>): Promise<number> {
  await work();
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)] as number;
}

/**
 * The list as it was read before migration 0017: messages counted per page, OFFSET. Joined on
 * the subject too, as the messages' index now leads with it (the index on the conversation
 * alone that the old statement used is gone, and SQLite would scan every message instead).
 */
async function baselineList(database: StoreDatabase, offset: number, subject?: string) {
  let query = database.db
    .selectFrom("ai_gateway_conversations as c")
    .leftJoin("ai_gateway_messages as m", (join) =>
      join.onRef("m.subject_uid", "=", "c.subject_uid").onRef("m.conversation_id", "=", "c.id"),
    )
    .select((eb) => [
      "c.id",
      eb.fn.count<number>("m.id").as("message_count"),
      eb.fn.max("m.created_at").as("last_message_at"),
    ])
    .groupBy(["c.id", "c.subject_uid", "c.created_at"]);
  if (subject !== undefined) query = query.where("c.subject_uid", "=", subject);
  return query
    .orderBy("c.created_at", "desc")
    .orderBy("c.id", "desc")
    .limit(PAGE + 1)
    .offset(offset)
    .execute();
}

/** The key of the list's row at `depth` (newest first), and the row count. */
async function listKeyAt(
  database: StoreDatabase,
  depth: number,
  subject?: string,
): Promise<ListKey | undefined> {
  let query = database.db
    .selectFrom("ai_gateway_conversations")
    .select(["created_at", "id"])
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .offset(Math.max(0, depth - 1));
  if (subject !== undefined) query = query.where("subject_uid", "=", subject);
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : [row.created_at, row.id];
}

interface Row {
  readonly dialect: string;
  readonly what: string;
  readonly page: string;
  readonly ms: number;
  readonly baselineMs: number;
  readonly goalMs: number;
  readonly note: string;
}

async function listRows(database: StoreDatabase, dialect: string): Promise<Row[]> {
  const rows: Row[] = [];
  const subject = "s0042";
  const subjectConversations = Math.ceil(CONVERSATIONS / SUBJECTS);
  for (const [who, count, filter] of [
    ["everyone", CONVERSATIONS, undefined],
    [`one subject (${subjectConversations} conversations)`, subjectConversations, subject],
  ] as const) {
    for (const [label, depth] of [
      ["first", 0],
      ["after 1 %", Math.floor(count * 0.01)],
      ["after 50 %", Math.floor(count * 0.5)],
      ["after 99.9 %", Math.max(0, Math.floor(count * 0.999) - PAGE)],
    ] as const) {
      const after = depth === 0 ? undefined : await listKeyAt(database, depth, filter);
      const ms = await p50(() =>
        listConversations(database, { subjectUid: filter, limit: PAGE + 1, after }),
      );
      const baselineMs = await p50(() => baselineList(database, depth, filter));
      rows.push({
        dialect,
        what: `list, ${who}`,
        page: `${label} (row ${depth.toLocaleString("en")})`,
        ms,
        baselineMs,
        goalMs: 20,
        note: "",
      });
    }
  }
  return rows;
}

/** Matches of a search in list order, keys only (setup: which key a deep page starts after). */
async function searchKeyAt(
  database: StoreDatabase,
  query: string,
  position: number,
): Promise<{ key: SearchKey | undefined; matches: number }> {
  const all = await searchConsole(database.db, database.capabilities, {
    query,
    limit: 10_000_000,
  });
  const row = all[Math.min(position, all.length - PAGE) - 1];
  return {
    key: row === undefined ? undefined : [row.created_at, row.parent_id, row.id, row.kind],
    matches: all.length,
  };
}

/** The search as it was before: OFFSET paging, and on PostgreSQL no trigram index. */
async function baselineSearch(database: StoreDatabase, query: string, offset: number) {
  const page = () =>
    sql`select * from (select 'message' as kind, m.id as id, m.conversation_id as parent_id,
        m.created_at as created_at, ${
          database.capabilities.dialect === "sqlite" ? sql`m.content` : sql`m.content::text`
        } as body
      from ${
        database.capabilities.dialect === "sqlite"
          ? sql`ai_gateway_messages_search s join ai_gateway_messages m on m.rowid = s.rowid
                where s.content match ${`"${query}"`}`
          : sql`ai_gateway_messages m where m.content::text ilike ${`%${query}%`}`
      }) hits order by created_at desc, parent_id desc, id desc limit ${PAGE + 1} offset ${offset}`;
  if (database.capabilities.dialect === "sqlite") return page().execute(database.db);
  return database.db.connection().execute(async (connection) => {
    await sql`set enable_bitmapscan = off`.execute(connection);
    try {
      return await page().execute(connection);
    } finally {
      await sql`reset enable_bitmapscan`.execute(connection);
    }
  });
}

/** The statements the store runs while `captured.on` (for `--explain`). */
const captured: { on: boolean; statements: { text: string; values: readonly unknown[] }[] } = {
  on: false,
  statements: [],
};

/**
 * `--explain`: PostgreSQL's plans of the statements a search's page runs (as the store runs
 * them, with their parameters), with their timings and buffers, on stderr.
 */
async function explainSearch(
  database: StoreDatabase,
  query: string,
  after: SearchKey | undefined,
): Promise<void> {
  captured.statements = [];
  captured.on = true;
  try {
    await searchConsole(database.db, database.capabilities, {
      query,
      limit: PAGE + 1,
      after,
      probeRows: PROBE,
    });
  } finally {
    captured.on = false;
  }
  for (const { text, values } of captured.statements) {
    const plan = await database.db.executeQuery<{ "QUERY PLAN": string }>(
      CompiledQuery.raw(`explain (analyze, buffers) ${text}`, [...values]),
    );
    log(
      `${query}${after === undefined ? "" : " (deep page)"}:\n${plan.rows.map((row) => row["QUERY PLAN"]).join("\n")}`,
    );
  }
}

async function searchRows(database: StoreDatabase, dialect: string): Promise<Row[]> {
  const rows: Row[] = [];
  const phrase = `${vocabulary[3]} ${vocabulary[7]}`;
  for (const [what, query, goalMs] of [
    ["search, a word in 1 % of the messages", wordIn(0.01), 50],
    ["search, a word in 0.1 %", wordIn(0.001), 50],
    ["search, a common word, in 5 %", wordIn(0.05), 50],
    // The slowest word: too rare to fill a page among the newest rows tried first (that try
    // spent), so every match is read through the index.
    [
      `search, a word at the first try's edge (${PROBE.toLocaleString("en")} rows)`,
      wordIn((0.9 * (PAGE + 1)) / Math.max(1, PROBE)),
      50,
    ],
    ["search, a phrase of two common words", phrase, 100],
  ] as const) {
    const deep = await searchKeyAt(database, query, 2000);
    for (const [label, after, offset] of [
      ["first", undefined, 0],
      [
        `after match ${Math.min(2000, Math.max(0, deep.matches - PAGE)).toLocaleString("en")}`,
        deep.key,
        Math.min(2000, Math.max(0, deep.matches - PAGE)),
      ],
    ] as const) {
      const ms = await p50(() =>
        searchConsole(database.db, database.capabilities, {
          query,
          limit: PAGE + 1,
          after,
          probeRows: PROBE,
        }),
      );
      const baselineMs = await p50(() => baselineSearch(database, query, offset));
      if (values.explain === true && database.capabilities.dialect === "postgres") {
        await explainSearch(database, query, after);
      }
      rows.push({
        dialect,
        what: `${what} ("${query}")`,
        page: label,
        ms,
        baselineMs,
        goalMs,
        note: `${deep.matches.toLocaleString("en")} matches`,
      });
    }
  }
  return rows;
}

const results: Row[] = [];
for (const dialect of dialects) {
  const fresh = await freshDatabase(dialect, {
    onStatement: (text, parameters) => {
      if (captured.on) captured.statements.push({ text, values: parameters ?? [] });
    },
  });
  try {
    log(`${dialect}: seeding ${MESSAGES.toLocaleString("en")} messages`);
    await seed(fresh.database);
    log(`${dialect}: lists`);
    results.push(...(await listRows(fresh.database, dialect)));
    log(`${dialect}: search`);
    results.push(...(await searchRows(fresh.database, dialect)));
  } finally {
    await fresh.cleanup();
  }
}

const out = [
  `Console lists and search, ${MESSAGES.toLocaleString("en")} messages in ${CONVERSATIONS.toLocaleString("en")} conversations of ${SUBJECTS} subjects; p50 of ${RUNS} runs, ms; baseline: the same page read as before (OFFSET; lists counting messages per page; PostgreSQL search without the trigram index):`,
  "",
  "| database | what | page | p50 ms | baseline p50 ms | baseline / now | goal | met | |",
  "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
  ...results.map(
    (row) =>
      `| ${row.dialect} | ${row.what} | ${row.page} | ${row.ms.toFixed(2)} | ${row.baselineMs.toFixed(2)} | ${(row.baselineMs / row.ms).toFixed(1)}× | < ${row.goalMs} | ${row.ms < row.goalMs ? "✓" : "✗"} | ${row.note} |`,
  ),
  "",
  `Command: node bin/run-ts.js bench/server/console-scale.ts ${process.argv.slice(2).join(" ")}`,
];
process.stdout.write(`${out.join("\n")}\n`);
