import { sql, type Kysely, type RawBuilder } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { StoreSchema } from "../schema.js";
import { SEARCH_CONTAINS_FUNCTION } from "../search-fold.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";
import { SEARCH_INDEXES, trigramQuery, trigramText } from "../search-indexes.js";
import { PROBE_ROWS, probeStatement, type SearchKeyRow } from "./console-search-probe.js";

/**
 * The console's full-text search over stored messages and job items (docs/console.md,
 * "Search"): a case-insensitive substring match on their JSON text (the query escaped as JSON
 * escapes it), newest first. On SQLite
 * it reads the FTS5 trigram index of migration 0007 (a phrase query for three characters or
 * more, plus a scan with the index's fold of the rows an import left for it to catch up; shorter
 * text, such as one emoji, is matched with LIKE over the same index table, which reads every
 * row); on PostgreSQL it is `ILIKE` on the JSON text, its candidates found by the trigram index
 * of the text without spaces (migration 0023).
 */
export interface SearchRow {
  readonly kind: "message" | "item";
  /** The message id, or the item key. */
  readonly id: string;
  /** The conversation id, or the job id. */
  readonly parent_id: string;
  /** The turn of an item; null for a message. */
  readonly turn_id: string | null;
  readonly subject_uid: string;
  readonly created_at: string;
  /** The JSON text that matched (message content, or the item). */
  readonly body: string;
}

function likePattern(query: string): string {
  return `%${query.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * The rows of `table` (aliased `alias`) its search index does not hold and that hold `query`
 * (`subject`: the search's ` and <alias>.subject_uid = ?`, if it has one): those after the lowest rowid a deferral of the table left out from (store/search-deferral.ts),
 * not in the index's `_docsize` table, matched by `verbatim_search_contains` (store/search-fold.ts:
 * the index's case fold, a substring of the JSON text). With no deferral the rowid range is empty
 * and nothing is scanned.
 */
function notIndexedYet(
  table: (typeof SEARCH_INDEXES)[number]["table"],
  alias: "m" | "i",
  query: string,
  subject: RawBuilder<unknown>,
) {
  const search = SEARCH_INDEXES.find((entry) => entry.table === table);
  const a = sql.table(alias);
  return sql`${a}.rowid > (select min(after_rowid) from verbatim_search_deferrals
        where table_name = ${table})
      and not exists (select 1 from ${sql.table(`${search?.index ?? ""}_docsize`)} d where d.id = ${a}.rowid)
      and ${sql.raw(SEARCH_CONTAINS_FUNCTION)}(${sql.ref(`${alias}.${search?.column ?? ""}`)}, ${query})${subject}`;
}

/** A match's sort key, newest first: `created_at`, `parent_id`, `id`, `kind`. */
export type SearchKey = readonly [createdAt: string, parentId: string, id: string, kind: string];

/** `rows` grouped by subject, each subject's rows in page order. */
function bySubject<Row extends SearchKeyRow>(rows: readonly Row[]): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const group = groups.get(row.subject_uid) ?? [];
    group.push(row);
    groups.set(row.subject_uid, group);
  }
  return groups;
}

/** A match's identity: ids are unique per subject only (migration 0021). */
const matchKey = (kind: string, subject: string, turnId: string | null, id: string): string =>
  JSON.stringify([kind, subject, turnId, id]);

/**
 * The rows with their JSON text: the page's messages and items read by key, each subject's
 * under its own `subject_uid = ?` condition (a page seldom holds more than a few subjects).
 * A page of one subject (always, when the search has a subject) reads one partition; a page
 * of several, which only a search of every subject gives, is marked across subjects (one
 * statement per subject would cost up to a round trip per match).
 */
async function withBodies(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  rows: readonly SearchKeyRow[],
): Promise<SearchRow[]> {
  const text = (column: "content" | "item") =>
    capabilities.dialect === "sqlite" ? sql.ref(column) : sql`${sql.ref(column)}::text`;
  const messages = bySubject(rows.filter((row) => row.kind === "message"));
  const items = bySubject(rows.filter((row) => row.kind === "item"));
  const bodies = new Map<string, string>();
  if (messages.size > 0) {
    const found = await db
      .selectFrom("ai_gateway_messages")
      .select(["subject_uid", "id", text("content").as("body")])
      .where((eb) =>
        eb.or(
          [...messages].map(([subject, group]) =>
            eb.and([
              eb("subject_uid", "=", subject),
              eb(
                "id",
                "in",
                group.map((row) => row.id),
              ),
            ]),
          ),
        ),
      )
      .$if(messages.size > 1, (query) => query.modifyEnd(sql.raw(ACROSS_SUBJECTS)))
      .execute();
    for (const row of found)
      bodies.set(matchKey("message", row.subject_uid, null, row.id), String(row.body));
  }
  if (items.size > 0) {
    const found = await db
      .selectFrom("background_agent_job_turn_items")
      .select(["subject_uid", "turn_id", "item_key", text("item").as("body")])
      .where((eb) =>
        eb.or(
          [...items].map(([subject, group]) =>
            eb.and([
              eb("subject_uid", "=", subject),
              eb(
                "turn_id",
                "in",
                group.map((row) => row.turn_id ?? ""),
              ),
              eb(
                "item_key",
                "in",
                group.map((row) => row.id),
              ),
            ]),
          ),
        ),
      )
      .$if(items.size > 1, (query) => query.modifyEnd(sql.raw(ACROSS_SUBJECTS)))
      .execute();
    for (const row of found) {
      bodies.set(matchKey("item", row.subject_uid, row.turn_id, row.item_key), String(row.body));
    }
  }
  return rows.flatMap((row) => {
    const body = bodies.get(
      matchKey(row.kind, row.subject_uid, row.kind === "message" ? null : row.turn_id, row.id),
    );
    // A row deleted between the two reads is left out of the page.
    return body === undefined ? [] : [{ ...row, body }];
  });
}

export async function searchConsole(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  request: {
    readonly query: string;
    readonly limit: number;
    /** The previous page's last match; none for the first page. */
    readonly after?: SearchKey | undefined;
    /** Newest rows of each table tried before the index (default PROBE_ROWS; 0: none). */
    readonly probeRows?: number;
    /**
     * Only this subject's messages and items: every statement names it (one partition of each
     * table on PostgreSQL); without it the search looks across every subject.
     */
    readonly subjectUid?: string | undefined;
  },
): Promise<SearchRow[]> {
  const { limit, after, subjectUid } = request;
  // ` and m.subject_uid = ?` (or `i.`) when the search has a subject.
  const ofSubject = (alias: "m" | "i") =>
    subjectUid === undefined ? sql`` : sql` and ${sql.raw(alias)}.subject_uid = ${subjectUid}`;
  const probeRows = request.probeRows ?? PROBE_ROWS;
  // The text is searched in the stored JSON, where quotes, backslashes and control characters
  // are escaped: the query is escaped the same way.
  const query = JSON.stringify(request.query).slice(1, -1);
  const like = likePattern(query);
  const probed = await (probeRows === 0
    ? undefined
    : probeStatement(capabilities, {
        rows: probeRows,
        matches: (alias, column) => {
          const text = sql.ref(`${alias}.${column}`);
          if (capabilities.dialect === "postgres")
            return sql`${text}::text ilike ${like} escape '\\'`;
          // The same match as the index's (its fold), or, below three characters, as LIKE's.
          return [...query].length >= 3
            ? sql`${sql.raw(SEARCH_CONTAINS_FUNCTION)}(${text}, ${query})`
            : sql`${text} like ${like} escape '\\'`;
        },
        limit,
        after,
        subjectUid,
      }).execute(db));
  if (probed?.rows[0]?.decided === 1) {
    return withBodies(
      db,
      capabilities,
      probed.rows.flatMap(({ decided: _decided, ...row }) => (row.id === null ? [] : [row])),
    );
  }
  let messages;
  let items;
  if (capabilities.dialect === "sqlite") {
    // The trigram index answers a phrase of three characters or more; below that, LIKE
    // (the same match, without the index).
    const long = [...query].length >= 3;
    const phrase = `"${query.replace(/"/g, '""')}"`;
    const matchMessages = long
      ? sql`s.content match ${phrase}`
      : sql`s.content like ${like} escape '\\'`;
    const matchItems = long ? sql`s.item match ${phrase}` : sql`s.item like ${like} escape '\\'`;
    const messageColumns = sql`'message' as kind, m.id as id, m.conversation_id as parent_id,
        null as turn_id, m.subject_uid as subject_uid, m.created_at as created_at`;
    const itemColumns = sql`'item' as kind, i.item_key as id, i.job_id as parent_id,
        i.turn_id as turn_id, i.subject_uid as subject_uid, i.created_at as created_at`;
    messages = sql`select ${messageColumns}
      from ai_gateway_messages_search s join ai_gateway_messages m on m.rowid = s.rowid
      where ${matchMessages}${ofSubject("m")}`;
    items = sql`select ${itemColumns}
      from background_agent_job_turn_items_search s
      join background_agent_job_turn_items i on i.rowid = s.rowid
      where ${matchItems}${ofSubject("i")}`;
    if (long) {
      // The phrase match reads the index only; rows it does not hold yet (an import's, until
      // they are caught up: store/search-deferral.ts) are matched by a scan with the same fold.
      // LIKE above reads the table's rows through the index table, held or not.
      messages = sql`${messages} union all select ${messageColumns}
        from ai_gateway_messages m
        where ${notIndexedYet("ai_gateway_messages", "m", query, ofSubject("m"))}`;
      items = sql`${items} union all select ${itemColumns}
        from background_agent_job_turn_items i
        where ${notIndexedYet("background_agent_job_turn_items", "i", query, ofSubject("i"))}`;
    }
  } else {
    // The trigram index holds the text without spaces (store/search-indexes.ts): the query
    // without its spaces finds the candidates, the query as written decides.
    const candidates = (column: string) =>
      sql`${trigramText(sql.ref(column))} ilike ${likePattern(trigramQuery(query))} escape '\\'
        and ${sql.ref(column)}::text ilike ${like} escape '\\'`;
    messages = sql`select 'message' as kind, m.id as id, m.conversation_id as parent_id,
        null as turn_id, m.subject_uid as subject_uid, m.created_at as created_at
      from ai_gateway_messages m
      where ${candidates("m.content")}${ofSubject("m")}`;
    items = sql`select 'item' as kind, i.item_key as id, i.job_id as parent_id,
        i.turn_id as turn_id, i.subject_uid as subject_uid, i.created_at as created_at
      from background_agent_job_turn_items i
      where ${candidates("i.item")}${ofSubject("i")}`;
  }
  // The page after the previous one's last match, by key (no OFFSET: a deep page costs what
  // the first does).
  const next =
    after === undefined
      ? sql``
      : sql`where (created_at, parent_id, id, kind) < (${after[0]}, ${after[1]}, ${after[2]}, ${after[3]})`;
  // Matches are sorted by their keys alone; the page's bodies are read after (a common word's
  // thousands of matches are not carried through the sort with their text).
  const text = (column: string) =>
    capabilities.dialect === "sqlite" ? sql.ref(column) : sql`${sql.ref(column)}::text`;
  const order = sql`order by created_at desc, parent_id desc, id desc, kind desc`;
  // A search of one subject names it everywhere, the page's bodies included (the subject as a
  // parameter, so PostgreSQL reads its one partition). Without a subject the search looks
  // through every subject's messages and items by nature, keyset-paged, and a page's bodies
  // are read under each match's own subject.
  const bodySubject = subjectUid === undefined ? sql`hits.subject_uid` : sql`${subjectUid}`;
  const result = await sql<SearchRow>`select hits.*, case when hits.kind = 'message'
      then (select ${text("b.content")} from ai_gateway_messages b
        where b.subject_uid = ${bodySubject} and b.id = hits.id)
      else (select ${text("b.item")} from background_agent_job_turn_items b
        where b.subject_uid = ${bodySubject} and b.turn_id = hits.turn_id
          and b.item_key = hits.id) end as body
    from (select * from (${messages} union all ${items}) matches ${next} ${order} limit ${limit}) hits
    ${order} ${subjectUid === undefined ? sql.raw(ACROSS_SUBJECTS) : sql``}`.execute(db);
  return result.rows.map((row) => ({
    ...row,
    body: typeof row.body === "string" ? row.body : JSON.stringify(row.body),
  }));
}
