import { sql, type Kysely, type Selectable } from "kysely";
import type { StoreSchema } from "../schema.js";
import type { ChainNodeTable, RecordedCallTable } from "../recorded-call-schema.js";

/**
 * Rows of the recorded calls (migration 0009): chain nodes looked up by prefix hash, and the
 * calls themselves. These only read and write rows; gateway/recorded-calls.ts decides.
 */

export type ChainNodeRow = Selectable<ChainNodeTable>;
export type RecordedCallRow = Selectable<RecordedCallTable>;

/** Hashes per statement: well under both databases' limits on bound parameters. */
const HASHES_PER_STATEMENT = 1000;

/** The deepest stored node among the given prefix hashes of one subject, or undefined. */
export async function findDeepestNode(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  prefixHashes: readonly string[],
): Promise<ChainNodeRow | undefined> {
  // Deepest chunk first: the first chunk with a hit holds the answer.
  for (let end = prefixHashes.length; end > 0; end -= HASHES_PER_STATEMENT) {
    const chunk = prefixHashes.slice(Math.max(0, end - HASHES_PER_STATEMENT), end);
    const row = await db
      .selectFrom("ai_gateway_chain_nodes")
      .selectAll()
      .where("subject_uid", "=", subjectUid)
      .where("prefix_sha256", "in", chunk)
      .orderBy("position", "desc")
      .limit(1)
      .executeTakeFirst();
    if (row !== undefined) return row;
  }
  return undefined;
}

export async function insertChainNodes(
  db: Kysely<StoreSchema>,
  rows: readonly ChainNodeRow[],
): Promise<void> {
  const width = 7;
  const perStatement = Math.floor(30_000 / width);
  for (let start = 0; start < rows.length; start += perStatement) {
    await db
      .insertInto("ai_gateway_chain_nodes")
      .values(rows.slice(start, start + perStatement))
      .onConflict((conflict) => conflict.columns(["subject_uid", "prefix_sha256"]).doNothing())
      .execute();
  }
}

/** The deepest (then latest) call whose last message is one of the given prefixes. */
export async function findPreviousCall(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  prefixHashes: readonly string[],
): Promise<{ id: string; message_count: number } | undefined> {
  for (let end = prefixHashes.length; end > 0; end -= HASHES_PER_STATEMENT) {
    const chunk = prefixHashes.slice(Math.max(0, end - HASHES_PER_STATEMENT), end);
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
  }
  return undefined;
}

export async function insertRecordedCall(
  db: Kysely<StoreSchema>,
  row: RecordedCallRow,
): Promise<void> {
  await db.insertInto("ai_gateway_recorded_calls").values(row).execute();
}

/** PostgreSQL: one recorder of a subject at a time, until the transaction ends. */
export async function lockSubjectForRecording(
  db: Kysely<StoreSchema>,
  subjectUid: string,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`verbatim-record:${subjectUid}`}))`.execute(db);
}

/** A conversation's calls, oldest first. */
export async function listCallsOfConversation(
  db: Kysely<StoreSchema>,
  conversationId: string,
): Promise<RecordedCallRow[]> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .selectAll()
    .where("conversation_id", "=", conversationId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** Calls by id (the previous calls of a listing). */
export async function findCallsById(
  db: Kysely<StoreSchema>,
  ids: readonly string[],
): Promise<RecordedCallRow[]> {
  if (ids.length === 0) return [];
  const out: RecordedCallRow[] = [];
  for (let start = 0; start < ids.length; start += HASHES_PER_STATEMENT) {
    out.push(
      ...(await db
        .selectFrom("ai_gateway_recorded_calls")
        .selectAll()
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
  let query = db.selectFrom("ai_gateway_recorded_calls").selectAll();
  if (filter.subjectUid !== undefined) query = query.where("subject_uid", "=", filter.subjectUid);
  if (filter.since !== undefined) query = query.where("created_at", ">=", filter.since);
  return query.orderBy("created_at").orderBy("id").execute();
}
