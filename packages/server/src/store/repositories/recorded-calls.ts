import { sql, type Insertable, type Kysely, type OnConflictBuilder, type Selectable } from "kysely";
import { queryTemplate } from "../query-template.js";
import type { StoreSchema } from "../schema.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";
import type { ChainNodeTable, RecordedCallTable } from "../recorded-call-schema.js";

/**
 * Rows of the recorded calls (migration 0009): chain nodes looked up by prefix hash, and the
 * calls themselves. These only read and write rows; gateway/recording/calls.ts decides.
 */

export type ChainNodeRow = Selectable<ChainNodeTable>;
export type RecordedCallRow = Selectable<RecordedCallTable>;

/** Hashes per statement: well under both databases' limits on bound parameters. */
const HASHES_PER_STATEMENT = 1000;

/** Hashes looked up at once from the end of a request: the usual extension ends there. */
const TAIL_WINDOW = 8;

const NODE_COLUMNS = [
  "subject_uid",
  "prefix_sha256",
  "conversation_id",
  "parent_prefix_sha256",
  "position",
  "message_sha256",
  "created_at",
  "message_id",
  "anchor_message_id",
  "anchor_count",
] as const;

type Window = [string, string, string, string, string, string, string, string, string];

/** The statements every call runs are query templates (compiled once; prepared on PostgreSQL). */
const deepestAmongWindowQuery = queryTemplate<Window, ChainNodeRow>((db, slot) =>
  db
    .selectFrom("ai_gateway_chain_nodes")
    .select([...NODE_COLUMNS])
    .where("subject_uid", "=", slot(0))
    .where(
      "prefix_sha256",
      "in",
      [1, 2, 3, 4, 5, 6, 7, 8].map((index) => slot(index)),
    )
    .orderBy("position", "desc")
    .limit(1),
);

/** Up to TAIL_WINDOW hashes as the template's slots (repeating the last: the same answer). */
function windowOf(subjectUid: string, hashes: readonly string[]): Window {
  const last = hashes[hashes.length - 1] as string;
  const out: string[] = [subjectUid];
  for (let index = 0; index < TAIL_WINDOW; index++) out.push(hashes[index] ?? last);
  return out as Window;
}

async function deepestAmong(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  hashes: readonly string[],
): Promise<ChainNodeRow | undefined> {
  if (hashes.length === 0) return undefined;
  if (hashes.length <= TAIL_WINDOW) {
    const { rows } = await deepestAmongWindowQuery.run(db, ...windowOf(subjectUid, hashes));
    return rows[0];
  }
  return db
    .selectFrom("ai_gateway_chain_nodes")
    .select([...NODE_COLUMNS])
    .where("subject_uid", "=", subjectUid)
    .where("prefix_sha256", "in", hashes)
    .orderBy("position", "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * The deepest stored node among a request's prefix hashes (entry i names messages 0..i), or
 * undefined. The stored prefixes of one request are always a run from its first message (a node
 * is stored only with all its ancestors), so: one lookup of the last few hashes (a client
 * extending its previous call is found there), else one of the first hash (a new conversation
 * ends there), else a binary search of point lookups (a fork further back): at most
 * 2 + log2(messages) indexed lookups, never a scan.
 */
export async function findDeepestNode(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  prefixHashes: readonly string[],
): Promise<ChainNodeRow | undefined> {
  const tailStart = Math.max(0, prefixHashes.length - TAIL_WINDOW);
  const tail = await deepestAmong(db, subjectUid, prefixHashes.slice(tailStart));
  if (tail !== undefined || tailStart === 0) return tail;
  let best = await deepestAmong(db, subjectUid, prefixHashes.slice(0, 1));
  if (best === undefined) return undefined;
  // Stored: 0..k for some k < tailStart; search k in (0, tailStart).
  let low = 1;
  let high = tailStart - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const found = await deepestAmong(db, subjectUid, [prefixHashes[middle] as string]);
    if (found === undefined) high = middle - 1;
    else {
      best = found;
      low = middle + 1;
    }
  }
  return best;
}

const insertChainNodeQuery = queryTemplate<
  [
    string,
    string,
    string,
    string | null,
    number,
    string,
    string,
    string | null,
    string | null,
    number | null,
  ],
  never
>((db, slot) =>
  db
    .insertInto("ai_gateway_chain_nodes")
    .values({
      subject_uid: slot(0),
      prefix_sha256: slot(1),
      conversation_id: slot(2),
      parent_prefix_sha256: slot(3),
      position: slot(4),
      message_sha256: slot(5),
      created_at: slot(6),
      message_id: slot(7),
      anchor_message_id: slot(8),
      anchor_count: slot(9),
    })
    .onConflict(keepDeeperAnchor),
);

/**
 * A node already stored keeps its place and message, and takes the new row's anchor only when
 * that covers more of its prefix in the same conversation: a message that ends where a stored
 * longer one passes through (a fork that gave back part of an answer) is what a later match
 * there continues, instead of writing that part again.
 */
function keepDeeperAnchor(conflict: OnConflictBuilder<StoreSchema, "ai_gateway_chain_nodes">) {
  return conflict
    .columns(["subject_uid", "prefix_sha256"])
    .doUpdateSet((update) => ({
      anchor_message_id: update.ref("excluded.anchor_message_id"),
      anchor_count: update.ref("excluded.anchor_count"),
    }))
    .where((where) =>
      where.and([
        where("ai_gateway_chain_nodes.conversation_id", "=", where.ref("excluded.conversation_id")),
        where(
          where.fn.coalesce("ai_gateway_chain_nodes.anchor_count", where.lit(0)),
          "<",
          where.ref("excluded.anchor_count"),
        ),
      ]),
    );
}

export async function insertChainNodes(
  db: Kysely<StoreSchema>,
  rows: readonly ChainNodeRow[],
): Promise<void> {
  // A call usually adds a few nodes: one template run each; a long new history in bulk.
  if (rows.length <= TAIL_WINDOW) {
    for (const row of rows) {
      await insertChainNodeQuery.run(
        db,
        row.subject_uid,
        row.prefix_sha256,
        row.conversation_id,
        row.parent_prefix_sha256,
        row.position,
        row.message_sha256,
        row.created_at,
        row.message_id,
        row.anchor_message_id,
        row.anchor_count,
      );
    }
    return;
  }
  const width = NODE_COLUMNS.length;
  const perStatement = Math.floor(30_000 / width);
  for (let start = 0; start < rows.length; start += perStatement) {
    await db
      .insertInto("ai_gateway_chain_nodes")
      .values(rows.slice(start, start + perStatement))
      .onConflict(keepDeeperAnchor)
      .execute();
  }
}

/**
 * Writes nodes over the subject's nodes of the same prefixes (a chain started again because its
 * conversation was deleted for its subject: its prefixes now name the new conversation).
 */
export async function replaceChainNodes(
  db: Kysely<StoreSchema>,
  rows: readonly ChainNodeRow[],
): Promise<void> {
  const perStatement = Math.floor(30_000 / NODE_COLUMNS.length);
  for (let start = 0; start < rows.length; start += perStatement) {
    await db
      .insertInto("ai_gateway_chain_nodes")
      .values(rows.slice(start, start + perStatement))
      .onConflict((conflict) =>
        conflict.columns(["subject_uid", "prefix_sha256"]).doUpdateSet((update) => ({
          conversation_id: update.ref("excluded.conversation_id"),
          message_id: update.ref("excluded.message_id"),
          anchor_message_id: update.ref("excluded.anchor_message_id"),
          anchor_count: update.ref("excluded.anchor_count"),
          created_at: update.ref("excluded.created_at"),
        })),
      )
      .execute();
  }
}

const previousCallWindowQuery = queryTemplate<Window, { id: string; message_count: number }>(
  (db, slot) =>
    db
      .selectFrom("ai_gateway_recorded_calls")
      .select(["id", "message_count"])
      .where("subject_uid", "=", slot(0))
      .where(
        "tip_prefix_sha256",
        "in",
        [1, 2, 3, 4, 5, 6, 7, 8].map((index) => slot(index)),
      )
      .orderBy("message_count", "desc")
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(1),
);

/**
 * The deepest (then latest) call whose last message is one of the given prefixes. Windows from
 * the end, each 8 times the last (8, 64, 512, then 1,000 at a time): the previous call of a
 * client extending its history is in the first.
 */
export async function findPreviousCall(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  prefixHashes: readonly string[],
  /** Awaited between two statements (a long request's lookup is many). */
  between: () => Promise<void> = () => Promise.resolve(),
): Promise<{ id: string; message_count: number } | undefined> {
  let end = prefixHashes.length;
  let size = TAIL_WINDOW;
  while (end > 0) {
    if (end < prefixHashes.length) await between();
    const chunk = prefixHashes.slice(Math.max(0, end - size), end);
    if (chunk.length <= TAIL_WINDOW) {
      const { rows } = await previousCallWindowQuery.run(db, ...windowOf(subjectUid, chunk));
      if (rows[0] !== undefined) return rows[0];
      end -= chunk.length;
      size = Math.min(HASHES_PER_STATEMENT, size * 8);
      continue;
    }
    const row = await db
      .selectFrom("ai_gateway_recorded_calls")
      .select(["id", "message_count"])
      .where("subject_uid", "=", subjectUid)
      .where("tip_prefix_sha256", "in", chunk)
      .orderBy("message_count", "desc")
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirst();
    if (row !== undefined) return row;
    end -= chunk.length;
    size = Math.min(HASHES_PER_STATEMENT, size * 8);
  }
  return undefined;
}

const CALL_COLUMNS = [
  "id",
  "subject_uid",
  "conversation_id",
  "wire_format",
  "path",
  "model",
  "tip_prefix_sha256",
  "message_count",
  "matched_count",
  "previous_call_id",
  "status_code",
  "request_headers",
  "request_body",
  "response_headers",
  "response_body_base64",
  "redacted",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "duration_ms",
  "created_at",
  "body_storage",
  "request_manifest",
  "request_base_call_id",
  "response_manifest",
  "request_size",
  "response_size",
] as const satisfies readonly (keyof RecordedCallRow)[];

/** A row to insert: the columns of migration 0015 may be left out (a row in the old form). */
export type RecordedCallInsert = Insertable<RecordedCallTable>;

const insertRecordedCallQuery = queryTemplate<unknown[], never>((db, slot) =>
  db
    .insertInto("ai_gateway_recorded_calls")
    .values(
      Object.fromEntries(CALL_COLUMNS.map((column, index) => [column, slot(index)])) as never,
    ),
);

export async function insertRecordedCall(
  db: Kysely<StoreSchema>,
  row: RecordedCallInsert,
): Promise<void> {
  const full: Record<string, unknown> = { body_storage: 0, ...row };
  await insertRecordedCallQuery.run(db, ...CALL_COLUMNS.map((column) => full[column] ?? null));
}

/** What placing a call in its chain writes into its row (gateway/recording/placement.ts). */
export interface CallPlacement {
  readonly conversation_id: string;
  readonly tip_prefix_sha256: string;
  readonly message_count: number;
  readonly matched_count: number;
  readonly previous_call_id: string | null;
  readonly input_tokens: number | null;
  readonly output_tokens: number | null;
  readonly cache_read_tokens: number | null;
  readonly cache_write_tokens: number | null;
}

const placeRecordedCallQuery = queryTemplate<
  [
    string,
    string,
    number,
    number,
    string | null,
    number | null,
    number | null,
    number | null,
    number | null,
    string,
    string,
  ],
  never
>((db, slot) =>
  db
    .updateTable("ai_gateway_recorded_calls")
    .set({
      conversation_id: slot(0),
      tip_prefix_sha256: slot(1),
      message_count: slot(2),
      matched_count: slot(3),
      previous_call_id: slot(4),
      input_tokens: slot(5),
      output_tokens: slot(6),
      cache_read_tokens: slot(7),
      cache_write_tokens: slot(8),
    })
    .where("subject_uid", "=", slot(9))
    .where("id", "=", slot(10)),
);

/** Writes a call of the subject's place in its chain (its conversation marks it placed). */
export async function placeRecordedCall(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
  placement: CallPlacement,
): Promise<void> {
  await placeRecordedCallQuery.run(
    db,
    placement.conversation_id,
    placement.tip_prefix_sha256,
    placement.message_count,
    placement.matched_count,
    placement.previous_call_id,
    placement.input_tokens,
    placement.output_tokens,
    placement.cache_read_tokens,
    placement.cache_write_tokens,
    subjectUid,
    id,
  );
}

const unplacedCallsQuery = queryTemplate<[string], { id: string }>((db, slot) =>
  db
    .selectFrom("ai_gateway_recorded_calls")
    .select("id")
    // A literal, not a parameter: the planner uses the partial index of unplaced calls only
    // when the statement itself says conversation_id = '' (else it walks the subject's calls).
    .where("conversation_id", "=", sql.lit(""))
    .where("subject_uid", "=", slot(0))
    .orderBy("kept_order")
    .orderBy("created_at")
    .orderBy("id"),
);

/**
 * The subject's calls not placed in a chain yet (no conversation), in the order they were kept:
 * by the database's sequence (PostgreSQL; servers' clocks may differ), then by time.
 */
export async function listUnplacedCallIds(
  db: Kysely<StoreSchema>,
  subjectUid: string,
): Promise<string[]> {
  const { rows } = await unplacedCallsQuery.run(db, subjectUid);
  return rows.map((row) => row.id);
}

/** One call of the subject by id. */
export async function findRecordedCall(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
): Promise<RecordedCallRow | undefined> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("id", "=", id)
    .executeTakeFirst();
}

/**
 * The subject that owns a call the operator names by id alone (served by the index on the
 * calls' `id`, migration 0021); undefined when there is none.
 */
export async function findRecordedCallOwner(
  db: Kysely<StoreSchema>,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("ai_gateway_recorded_calls")
    .select("subject_uid")
    .where("id", "=", id)
    // The operator's routes are given the id only: this finds the owner the next reads name.
    .modifyEnd(sql.raw(ACROSS_SUBJECTS))
    .executeTakeFirst();
  return row?.subject_uid;
}

/** PostgreSQL: one recorder of a subject at a time, until the transaction ends. */
export async function lockSubjectForRecording(
  db: Kysely<StoreSchema>,
  subjectUid: string,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`verbatim-record:${subjectUid}`}))`.execute(db);
}

/** A conversation of the subject's calls, oldest first. */
export async function listCallsOfConversation(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
): Promise<RecordedCallRow[]> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .where("conversation_id", "=", conversationId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** The subject's calls by id (the previous calls of a listing). */
export async function findCallsById(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly string[],
): Promise<RecordedCallRow[]> {
  if (ids.length === 0) return [];
  const out: RecordedCallRow[] = [];
  for (let start = 0; start < ids.length; start += HASHES_PER_STATEMENT) {
    out.push(
      ...(await db
        .selectFrom("ai_gateway_recorded_calls")
        .selectAll()
        .where("subject_uid", "=", subjectUid)
        .where("id", "in", ids.slice(start, start + HASHES_PER_STATEMENT))
        .execute()),
    );
  }
  return out;
}

/** Calls of a subject (or all) since a time, oldest first. */
export async function listRecordedCalls(
  db: Kysely<StoreSchema>,
  filter: { readonly subjectUid?: string; readonly since?: string },
): Promise<RecordedCallRow[]> {
  // A call not placed yet has no conversation: the report shows it once it is placed.
  let query = db
    .selectFrom("ai_gateway_recorded_calls")
    .selectAll()
    .where("conversation_id", "!=", "");
  if (filter.subjectUid !== undefined) query = query.where("subject_uid", "=", filter.subjectUid);
  if (filter.since !== undefined) query = query.where("created_at", ">=", filter.since);
  query = query.orderBy("created_at").orderBy("id");
  // `verbatim cache-report` without --subject reports on every subject's calls.
  if (filter.subjectUid === undefined) query = query.modifyEnd(sql.raw(ACROSS_SUBJECTS));
  return query.execute();
}
