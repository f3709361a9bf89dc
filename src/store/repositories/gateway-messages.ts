import { sql, type Kysely, type Selectable } from "kysely";
import type { GatewayMessageTable, StoreSchema } from "../schema.js";

/**
 * The queries of `ai_gateway_messages` and `ai_gateway_branches`, one set for both dialects.
 * Every query names the subject: rows of another subject are never read or written. The
 * gateway (src/gateway) validates input and decides; these functions only read and write rows.
 */
export type MessageRow = Selectable<GatewayMessageTable>;

/** What appending needs to know about an anchor. */
export interface AnchorRow {
  readonly id: string;
  readonly conversation_id: string;
  readonly branch_id: string;
  readonly depth: number;
  readonly context_start_depth: number;
  readonly status: string;
}

export async function findAnchor(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
): Promise<AnchorRow | undefined> {
  return db
    .selectFrom("ai_gateway_messages")
    .select(["id", "conversation_id", "branch_id", "depth", "context_start_depth", "status"])
    .where("id", "=", messageId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
}

export async function findMessageRow(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
): Promise<MessageRow | undefined> {
  return db
    .selectFrom("ai_gateway_messages")
    .selectAll()
    .where("id", "=", messageId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
}

export async function findMessageRows(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageIds: readonly string[],
): Promise<MessageRow[]> {
  if (messageIds.length === 0) return [];
  return db
    .selectFrom("ai_gateway_messages")
    .selectAll()
    .where("id", "in", [...messageIds])
    .where("subject_uid", "=", subjectUid)
    .orderBy("depth")
    .execute();
}

/**
 * Claims depths `anchor.depth + 1 … anchor.depth + count` at the end of the anchor's branch:
 * true when the anchor is the branch's tip (the branch now ends `count` further), false when
 * something already continues it (then the caller starts a fork). On PostgreSQL the update
 * locks the branch row, so of two concurrent continuations of one tip exactly one extends it.
 */
export async function claimBranchTip(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  anchor: AnchorRow,
  count: number,
): Promise<boolean> {
  const result = await db
    .updateTable("ai_gateway_branches")
    .set({ tip_depth: anchor.depth + count })
    .where("id", "=", anchor.branch_id)
    .where("subject_uid", "=", subjectUid)
    .where("tip_depth", "=", anchor.depth)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export interface NewBranch {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string;
  readonly parent_branch_id: string | null;
  readonly fork_depth: number;
  readonly tip_depth: number;
  readonly created_at: string;
}

export async function insertBranch(db: Kysely<StoreSchema>, branch: NewBranch): Promise<void> {
  await db.insertInto("ai_gateway_branches").values(branch).execute();
}

export async function insertMessageRows(
  db: Kysely<StoreSchema>,
  rows: readonly MessageRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto("ai_gateway_messages")
    .values([...rows])
    .execute();
}

/**
 * Sets the final status and content of an in_progress message; false when no in_progress
 * message of the subject has this id.
 */
export async function finishMessageRow(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
  final: { status: string; content: string; metadata: string; updated_at: string },
): Promise<boolean> {
  const result = await db
    .updateTable("ai_gateway_messages")
    .set(final)
    .where("id", "=", messageId)
    .where("subject_uid", "=", subjectUid)
    .where("status", "=", "in_progress")
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * The chain that ends at `anchor`, from depth `fromDepth` on, in order: one query. A recursive
 * walk over the (few) branches on the path gives each branch's depth range; the messages come
 * from the unique (branch_id, depth) index, so the cost grows with the context read, not with
 * the conversation or the number of forks elsewhere.
 */
export async function readChainRows(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  anchor: AnchorRow,
  fromDepth: number,
): Promise<MessageRow[]> {
  const result = await sql<MessageRow>`
    with recursive path (branch_id, parent_branch_id, fork_depth, max_depth) as (
      select id, parent_branch_id, fork_depth, cast(${anchor.depth} as integer)
        from ai_gateway_branches
        where id = ${anchor.branch_id} and subject_uid = ${subjectUid}
      union all
      select b.id, b.parent_branch_id, b.fork_depth, p.fork_depth
        from ai_gateway_branches b
        join path p on b.id = p.parent_branch_id
        where p.fork_depth >= ${fromDepth}
    )
    select m.* from path
      join ai_gateway_messages m on m.branch_id = path.branch_id
      where m.depth > path.fork_depth and m.depth <= path.max_depth
        and m.depth >= ${fromDepth} and m.subject_uid = ${subjectUid}
      order by m.depth`.execute(db);
  return result.rows;
}

/** Messages of a conversation in the order they were written (every branch), paged. */
export async function listConversationRows(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
  page: { readonly limit: number; readonly offset: number },
): Promise<MessageRow[]> {
  return db
    .selectFrom("ai_gateway_messages")
    .selectAll()
    .where("conversation_id", "=", conversationId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("created_at")
    .orderBy("depth")
    .orderBy("id")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

/** Ids of the messages that continue a message (more than one: forks), oldest first. */
export async function listContinuationIds(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom("ai_gateway_messages")
    .select("id")
    .where("previous_message_id", "=", messageId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map((row) => row.id);
}
