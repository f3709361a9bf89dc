import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { StoreSchema } from "../schema.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";

/**
 * Rows of retention and deletion (`verbatim db prune`, `verbatim db delete-subject`): which
 * conversations ended before a cutoff, and deleting one conversation's rows, a subject's rows,
 * and pieces and images nothing refers to any more. These only read and delete rows;
 * gateway/maintenance/retention.ts decides. Every statement names the subject.
 */

/** Ids bound per statement: well under both databases' limits on bound parameters. */
const IDS_PER_STATEMENT = 1000;

async function inSlices<T, R>(
  items: readonly T[],
  work: (slice: readonly T[]) => Promise<R[]>,
): Promise<R[]> {
  const out: R[] = [];
  for (let start = 0; start < items.length; start += IDS_PER_STATEMENT) {
    out.push(...(await work(items.slice(start, start + IDS_PER_STATEMENT))));
  }
  return out;
}

/**
 * SQLite: the subject as a condition no index is chosen for, where another index finds fewer
 * rows (the calls of the last minutes): beside `subject_uid = ?`, SQLite (no statistics) would
 * walk all the subject's calls through an index that leads with the subject instead. PostgreSQL
 * weighs both with its statistics, and a plain `subject_uid = ?` picks the subject's partition.
 */
function subjectOfCall(capabilities: Pick<DialectCapabilities, "dialect">) {
  return capabilities.dialect === "sqlite"
    ? sql<string>`${sql.ref("subject_uid")} || ''`
    : sql<string>`${sql.ref("subject_uid")}`;
}

export interface ConversationKey {
  readonly id: string;
  readonly subject_uid: string;
}

/** Marks a statement across subjects when no subject is given (a prune of every subject). */
function acrossSubjectsUnless<Q extends { modifyEnd(node: ReturnType<typeof sql.raw>): Q }>(
  subjectUid: string | undefined,
  query: Q,
): Q {
  return subjectUid === undefined ? query.modifyEnd(sql.raw(ACROSS_SUBJECTS)) : query;
}

/**
 * Conversations whose last activity (a message written or updated, a recorded call, a job
 * updated) is before `cutoff`, after `after` in id order, at most `limit`: the subject's, or,
 * without one, every subject's (a prune's cutoff scan; each conversation found is then deleted
 * naming its subject).
 */
export async function conversationsEndedBefore(
  db: Kysely<StoreSchema>,
  filter: { readonly cutoff: string; readonly subjectUid?: string; readonly after: string },
  limit: number,
): Promise<ConversationKey[]> {
  let query = db
    .selectFrom("ai_gateway_conversations as c")
    .select(["c.id", "c.subject_uid"])
    .where("c.created_at", "<", filter.cutoff)
    .where("c.id", ">", filter.after)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("ai_gateway_messages as m")
            .select("m.id")
            .whereRef("m.subject_uid", "=", "c.subject_uid")
            .whereRef("m.conversation_id", "=", "c.id")
            .where("m.updated_at", ">=", filter.cutoff),
        ),
      ),
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("ai_gateway_recorded_calls as r")
            .select("r.id")
            .whereRef("r.subject_uid", "=", "c.subject_uid")
            .whereRef("r.conversation_id", "=", "c.id")
            .where("r.created_at", ">=", filter.cutoff),
        ),
      ),
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("background_agent_jobs as j")
            .select("j.id")
            .whereRef("j.subject_uid", "=", "c.subject_uid")
            .whereRef("j.conversation_id", "=", "c.id")
            .where("j.updated_at", ">=", filter.cutoff),
        ),
      ),
    )
    .orderBy("c.id")
    .limit(limit);
  if (filter.subjectUid !== undefined) query = query.where("c.subject_uid", "=", filter.subjectUid);
  return acrossSubjectsUnless(filter.subjectUid, query).execute();
}

/** A subject's conversations after `after` in id order, at most `limit`. */
export async function conversationsOf(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  after: string,
  limit: number,
): Promise<ConversationKey[]> {
  return db
    .selectFrom("ai_gateway_conversations")
    .select(["id", "subject_uid"])
    .where("subject_uid", "=", subjectUid)
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
}

/**
 * Recorded calls placed nowhere yet (no conversation) and kept before `cutoff`: the subject's,
 * or every subject's (a prune's cutoff scan; each call found is deleted naming its subject).
 */
export async function unplacedCallsBefore(
  db: Kysely<StoreSchema>,
  filter: { readonly cutoff: string; readonly subjectUid?: string },
  limit: number,
): Promise<{ id: string; subject_uid: string }[]> {
  let query = db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["id", "subject_uid"])
    // A literal: the partial index of unplaced calls serves only a statement that says so.
    .where("conversation_id", "=", sql.lit(""))
    .where("created_at", "<", filter.cutoff)
    .orderBy("id")
    .limit(limit);
  if (filter.subjectUid !== undefined) query = query.where("subject_uid", "=", filter.subjectUid);
  return acrossSubjectsUnless(filter.subjectUid, query).execute();
}

export async function countUnplacedCallsBefore(
  db: Kysely<StoreSchema>,
  filter: { readonly cutoff: string; readonly subjectUid?: string },
): Promise<number> {
  let query = db
    .selectFrom("ai_gateway_recorded_calls")
    .select((select) => select.fn.countAll<string | number>().as("count"))
    // A literal: the partial index of unplaced calls serves only a statement that says so.
    .where("conversation_id", "=", sql.lit(""))
    .where("created_at", "<", filter.cutoff);
  if (filter.subjectUid !== undefined) query = query.where("subject_uid", "=", filter.subjectUid);
  return Number(
    (await acrossSubjectsUnless(filter.subjectUid, query).executeTakeFirst())?.count ?? 0,
  );
}

/** The ids of a conversation's recorded calls, locked for the transaction (PostgreSQL). */
export async function lockCallsOfConversation(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  key: ConversationKey,
): Promise<string[]> {
  let query = db
    .selectFrom("ai_gateway_recorded_calls")
    .select("id")
    .where("subject_uid", "=", key.subject_uid)
    .where("conversation_id", "=", key.id);
  if (capabilities.dialect === "postgres") query = query.forUpdate();
  return (await query.execute()).map((row) => row.id);
}

/** Locks calls by id for the transaction (PostgreSQL); the ids still there. */
export async function lockCalls(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  let query = db
    .selectFrom("ai_gateway_recorded_calls")
    .select("id")
    .where("subject_uid", "=", subjectUid)
    .where("id", "in", ids);
  if (capabilities.dialect === "postgres") query = query.forUpdate();
  return (await query.execute()).map((row) => row.id);
}

/** Calls outside `ids` whose request is a diff of one of `ids` (they must not lose their base). */
export async function callsDiffingAgainst(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly string[],
) {
  const deleting = new Set(ids);
  const rows = await inSlices(ids, (slice) =>
    db
      .selectFrom("ai_gateway_recorded_calls")
      .selectAll()
      // Served by the index of the subject's calls by base (migration 0021).
      .where("subject_uid", "=", subjectUid)
      .where("request_base_call_id", "is not", null)
      .where("request_base_call_id", "in", slice)
      .execute(),
  );
  return rows.filter((row) => !deleting.has(row.id));
}

/** Writes a call of the subject's request manifest flat (its base is about to go). */
export async function setFlatRequestManifest(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
  manifest: Buffer,
): Promise<void> {
  await db
    .updateTable("ai_gateway_recorded_calls")
    .set({ request_manifest: manifest, request_base_call_id: null })
    .where("subject_uid", "=", subjectUid)
    .where("id", "=", id)
    .execute();
}

/** What a deletion removed, by kind. */
export interface DeletedRows {
  conversations: number;
  messages: number;
  recordedCalls: number;
  jobs: number;
}

function count(result: readonly { numDeletedRows: bigint }[]): number {
  return result.reduce((sum, row) => sum + Number(row.numDeletedRows), 0);
}

/** Deletes a job's rows: wake events, turn items, turns, the job. */
async function deleteJobs(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  jobIds: readonly string[],
): Promise<number> {
  const deleted = await inSlices(jobIds, async (slice) => {
    for (const table of [
      "background_agent_job_wake_events",
      "background_agent_job_turn_items",
      "background_agent_job_turns",
    ] as const) {
      await db
        .deleteFrom(table)
        .where("subject_uid", "=", subjectUid)
        .where("job_id", "in", slice)
        .execute();
    }
    return db
      .deleteFrom("background_agent_jobs")
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", slice)
      .execute();
  });
  return count(deleted);
}

/** Deletes recorded calls by id (their pieces are freed by the sweep). */
export async function deleteCalls(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly string[],
): Promise<number> {
  return count(
    await inSlices(ids, (slice) =>
      db
        .deleteFrom("ai_gateway_recorded_calls")
        .where("subject_uid", "=", subjectUid)
        .where("id", "in", slice)
        .execute(),
    ),
  );
}

/**
 * Deletes one conversation and what belongs to it: its jobs, messages (the search index
 * follows, by trigger on SQLite), branches, chain nodes, recorded calls and pending backfill.
 * The caller has flattened the manifests of calls elsewhere that diff against its calls.
 */
export async function deleteConversationRows(
  db: Kysely<StoreSchema>,
  key: ConversationKey,
  callIds: readonly string[],
): Promise<DeletedRows> {
  const subject = key.subject_uid;
  const jobIds = (
    await db
      .selectFrom("background_agent_jobs")
      .select("id")
      .where("subject_uid", "=", subject)
      .where("conversation_id", "=", key.id)
      .execute()
  ).map((row) => row.id);
  const jobs = await deleteJobs(db, subject, jobIds);
  // Messages refer to one another and to branches, branches to one another: one statement
  // each, checked at its end.
  const messages = count(
    await db
      .deleteFrom("ai_gateway_messages")
      .where("subject_uid", "=", subject)
      .where("conversation_id", "=", key.id)
      .execute(),
  );
  await db
    .deleteFrom("ai_gateway_branches")
    .where("subject_uid", "=", subject)
    .where("conversation_id", "=", key.id)
    .execute();
  await db
    .deleteFrom("ai_gateway_chain_nodes")
    .where("subject_uid", "=", subject)
    .where("conversation_id", "=", key.id)
    .execute();
  await db
    .deleteFrom("ai_gateway_history_backfills")
    .where("subject_uid", "=", subject)
    .where("conversation_id", "=", key.id)
    .execute();
  const recordedCalls = await deleteCalls(db, subject, callIds);
  const conversations = count(
    await db
      .deleteFrom("ai_gateway_conversations")
      .where("subject_uid", "=", subject)
      .where("id", "=", key.id)
      .execute(),
  );
  return { conversations, messages, recordedCalls, jobs };
}

/** What a conversation's deletion would remove (a dry run). */
export async function countConversationRows(
  db: Kysely<StoreSchema>,
  key: ConversationKey,
): Promise<DeletedRows> {
  const countOf = async (
    table: "ai_gateway_messages" | "ai_gateway_recorded_calls" | "background_agent_jobs",
  ): Promise<number> => {
    const row = await db
      .selectFrom(table)
      .select((select) => select.fn.countAll<string | number>().as("count"))
      .where("subject_uid", "=", key.subject_uid)
      .where("conversation_id", "=", key.id)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  };
  return {
    conversations: 1,
    messages: await countOf("ai_gateway_messages"),
    recordedCalls: await countOf("ai_gateway_recorded_calls"),
    jobs: await countOf("background_agent_jobs"),
  };
}

/** The rest a subject owns once its conversations are gone, deleted at most `limit` rows a table. */
export async function deleteSubjectLeftovers(
  db: Kysely<StoreSchema>,
  subjectUid: string,
): Promise<{ jobs: number; keys: number }> {
  const jobIds = (
    await db
      .selectFrom("background_agent_jobs")
      .select("id")
      .where("subject_uid", "=", subjectUid)
      .execute()
  ).map((row) => row.id);
  const jobs = await deleteJobs(db, subjectUid, jobIds);
  for (const table of [
    "ai_gateway_chain_nodes",
    "ai_gateway_history_backfills",
    "ai_gateway_idempotency_keys",
    "ai_gateway_caller_deletions",
    "ai_gateway_images",
    "ai_gateway_body_chunks",
    "ai_gateway_body_pieces",
    "ai_gateway_body_packs",
  ] as const) {
    await db.deleteFrom(table).where("subject_uid", "=", subjectUid).execute();
  }
  const keys = count(
    await db.deleteFrom("verbatim_api_keys").where("subject_uid", "=", subjectUid).execute(),
  );
  return { jobs, keys };
}

/**
 * Idempotency keys kept before `cutoff` (they answer a retried request; old ones are done): the
 * subject's, or every subject's (a prune's cutoff sweep: no subject is told apart).
 */
export async function deleteIdempotencyKeysBefore(
  db: Kysely<StoreSchema>,
  filter: { readonly cutoff: string; readonly subjectUid?: string },
): Promise<void> {
  let query = db.deleteFrom("ai_gateway_idempotency_keys").where("created_at", "<", filter.cutoff);
  if (filter.subjectUid !== undefined) query = query.where("subject_uid", "=", filter.subjectUid);
  await acrossSubjectsUnless(filter.subjectUid, query).execute();
}

/** A subject's pieces created before `cutoff`, after `after` in id order, at most `limit`. */
export async function piecesBefore(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  cutoff: string,
  after: number,
  limit: number,
): Promise<number[]> {
  const rows = await db
    .selectFrom("ai_gateway_body_pieces")
    .select("id")
    .where("subject_uid", "=", subjectUid)
    .where("created_at", "<", cutoff)
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => Number(row.id));
}

/** The manifests of a subject's calls after `after` in id order (a page), or kept since a time. */
export function manifestsQuery(
  db: Kysely<StoreSchema>,
  capabilities: Pick<DialectCapabilities, "dialect">,
  subjectUid: string,
  page: { readonly after: string; readonly limit: number } | { readonly since: string },
) {
  const query = db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["id", "request_manifest", "response_manifest"])
    .where("body_storage", "=", 1);
  return "since" in page
    ? query
        .where(subjectOfCall(capabilities), "=", subjectUid)
        .where("created_at", ">=", page.since)
    : query
        .where("subject_uid", "=", subjectUid)
        .where("id", ">", page.after)
        .orderBy("id")
        .limit(page.limit);
}

export async function manifestsOf(
  db: Kysely<StoreSchema>,
  capabilities: Pick<DialectCapabilities, "dialect">,
  subjectUid: string,
  page: { readonly after: string; readonly limit: number } | { readonly since: string },
) {
  return manifestsQuery(db, capabilities, subjectUid, page).execute();
}

/** Locks pieces for the transaction (PostgreSQL): a recorder referring to them waits. */
export async function lockPieces(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  ids: readonly number[],
): Promise<void> {
  if (capabilities.dialect !== "postgres" || ids.length === 0) return;
  await db
    .selectFrom("ai_gateway_body_pieces")
    .select("id")
    .where("subject_uid", "=", subjectUid)
    .where("id", "in", ids)
    .forUpdate()
    .execute();
}

/** How many rows of a table of recorded bytes a subject holds (all, or among `ids`), and their bytes as stored. */
async function bytesHeld(
  db: Kysely<StoreSchema>,
  table: "ai_gateway_body_pieces" | "ai_gateway_body_packs",
  subjectUid: string,
  ids?: readonly number[],
): Promise<{ pieces: number; bytes: number }> {
  // Both tables have the columns read here; one of them names the query's type.
  let query = db
    .selectFrom(table as "ai_gateway_body_pieces")
    .select((select) => [
      select.fn.countAll<string | number>().as("pieces"),
      select.fn.sum<string | number>(sql`length(bytes)`).as("bytes"),
    ])
    .where("subject_uid", "=", subjectUid);
  if (ids !== undefined) query = query.where("id", "in", ids);
  const row = await query.executeTakeFirst();
  return { pieces: Number(row?.pieces ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/** How many pieces a subject holds, and their bytes as stored. */
export function piecesHeld(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids?: readonly number[],
): Promise<{ pieces: number; bytes: number }> {
  return bytesHeld(db, "ai_gateway_body_pieces", subjectUid, ids);
}

/** Deletes pieces and their chunks; the bytes they held, as stored. */
export async function deletePieces(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly number[],
): Promise<{ pieces: number; bytes: number }> {
  if (ids.length === 0) return { pieces: 0, bytes: 0 };
  const sizes = await piecesHeld(db, subjectUid, ids);
  await db
    .deleteFrom("ai_gateway_body_chunks")
    .where("subject_uid", "=", subjectUid)
    .where("piece_id", "in", ids)
    .execute();
  await db
    .deleteFrom("ai_gateway_body_pieces")
    .where("subject_uid", "=", subjectUid)
    .where("id", "in", ids)
    .execute();
  return sizes;
}

/** A pack as a sweep weighs it: its id and the list of the pieces it holds. */
export interface PackCandidate {
  readonly id: number;
  readonly size: number;
  readonly pieces: Buffer;
}

/** A subject's packs created before `cutoff` (their oldest piece), after `after` in id order. */
export async function packsBefore(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  cutoff: string,
  after: number,
  limit: number,
): Promise<PackCandidate[]> {
  const rows = await db
    .selectFrom("ai_gateway_body_packs")
    .select(["id", "size", "pieces"])
    .where("subject_uid", "=", subjectUid)
    .where("created_at", "<", cutoff)
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** How many packs a subject holds (all, or among `ids`), and their bytes as stored. */
export function packsHeld(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids?: readonly number[],
): Promise<{ pieces: number; bytes: number }> {
  return bytesHeld(db, "ai_gateway_body_packs", subjectUid, ids);
}

/**
 * Deletes packs and the chunks of the pieces they hold (`pieceIds`); how many packs and the
 * bytes they held, as stored.
 */
export async function deletePacks(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly number[],
  pieceIds: readonly number[],
): Promise<{ pieces: number; bytes: number }> {
  if (ids.length === 0) return { pieces: 0, bytes: 0 };
  const sizes = await packsHeld(db, subjectUid, ids);
  await inSlices(pieceIds, async (slice) => {
    await db
      .deleteFrom("ai_gateway_body_chunks")
      .where("subject_uid", "=", subjectUid)
      .where("piece_id", "in", slice)
      .execute();
    return [];
  });
  await db
    .deleteFrom("ai_gateway_body_packs")
    .where("subject_uid", "=", subjectUid)
    .where("id", "in", ids)
    .execute();
  return sizes;
}

/** A subject's images stored before `cutoff`: candidates to free. */
export async function imagesBefore(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  cutoff: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom("ai_gateway_images")
    .select("sha256")
    .where("subject_uid", "=", subjectUid)
    .where("created_at", "<", cutoff)
    .execute();
  return rows.map((row) => row.sha256);
}

/** A page of a subject's message contents, in id order. */
export async function messageContentsOf(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  after: string,
  limit: number,
): Promise<{ id: string; content: string }[]> {
  return db
    .selectFrom("ai_gateway_messages")
    .select(["id", "content"])
    .where("subject_uid", "=", subjectUid)
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
}

export async function deleteImages(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  hashes: readonly string[],
): Promise<number> {
  return count(
    await inSlices(hashes, (slice) =>
      db
        .deleteFrom("ai_gateway_images")
        .where("subject_uid", "=", subjectUid)
        .where("sha256", "in", slice)
        .execute(),
    ),
  );
}
