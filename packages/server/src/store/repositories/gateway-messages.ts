import { sql, type Kysely, type Selectable } from "kysely";
import { selectRowArrays } from "../array-rows.js";
import { queryTemplate, type QueryTemplate } from "../query-template.js";
import type { GatewayMessageTable, StoreSchema } from "../schema.js";

/**
 * The queries of `ai_gateway_messages` and `ai_gateway_branches`, one set for both dialects.
 * Every query names the subject: rows of another subject are never read or written. The
 * gateway (src/gateway) validates input and decides; these functions only read and write rows.
 */
export type MessageRow = Selectable<GatewayMessageTable>;

/**
 * A message row as a chain read returns it: without the columns every row of one chain shares
 * with its anchor (subject, conversation) or that follow from the type (role), so long contexts
 * move less data.
 */
export type ChainRow = Pick<
  MessageRow,
  | "id"
  | "previous_message_id"
  | "type"
  | "status"
  | "content"
  | "metadata"
  | "branch_id"
  | "depth"
  | "context_start_depth"
  | "created_at"
  | "updated_at"
>;

/** The values of `type` and `status` the gateway writes (src/gateway/conversations/message-types.ts). */
export const MESSAGE_TYPE_VALUES = ["user", "assistant", "tool_result", "summary"] as const;
export const MESSAGE_STATUS_VALUES = [
  "in_progress",
  "completed",
  "failed",
  "incomplete",
  "cancelled",
] as const;

/** `case column when 'a' then 0 when 'b' then 1 … end`: a column's value as its index. */
function codeOf(column: "type" | "status", values: readonly string[]) {
  const whens = values.map((value, index) => sql`when ${sql.lit(value)} then ${sql.lit(index)}`);
  return sql<number | null>`case ${sql.ref(column)} ${sql.join(whens, sql` `)} end`;
}

/** The stored `metadata` of a message without caller metadata or gateway facts. */
export const EMPTY_METADATA_JSON = '{"caller":{},"gateway":{}}';

/** What appending needs to know about an anchor. */
export interface AnchorRow {
  readonly id: string;
  readonly conversation_id: string;
  readonly branch_id: string;
  readonly depth: number;
  readonly context_start_depth: number;
  readonly status: string;
}

const findAnchorQuery = queryTemplate<[string, string], AnchorRow>((db, slot) =>
  db
    .selectFrom("ai_gateway_messages")
    .select(["id", "conversation_id", "branch_id", "depth", "context_start_depth", "status"])
    .where("id", "=", slot(0))
    .where("subject_uid", "=", slot(1)),
);

export async function findAnchor(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
): Promise<AnchorRow | undefined> {
  const { rows } = await findAnchorQuery.run(db, messageId, subjectUid);
  return rows[0];
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

/** The messages that continue a message (its children: more than one means forks). */
export async function findContinuationRows(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
): Promise<MessageRow[]> {
  return db
    .selectFrom("ai_gateway_messages")
    .selectAll()
    .where("previous_message_id", "=", messageId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/**
 * Claims depths `anchor.depth + 1 … anchor.depth + count` at the end of the anchor's branch:
 * true when the anchor is the branch's tip (the branch now ends `count` further), false when
 * something already continues it (then the caller starts a fork). On PostgreSQL the update
 * locks the branch row, so of two concurrent continuations of one tip exactly one extends it.
 */
const claimBranchTipQuery = queryTemplate<[number, string, string, number], never>((db, slot) =>
  db
    .updateTable("ai_gateway_branches")
    .set({ tip_depth: slot(0) })
    .where("id", "=", slot(1))
    .where("subject_uid", "=", slot(2))
    .where("tip_depth", "=", slot(3)),
);

export async function claimBranchTip(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  anchor: AnchorRow,
  count: number,
): Promise<boolean> {
  const result = await claimBranchTipQuery.run(
    db,
    anchor.depth + count,
    anchor.branch_id,
    subjectUid,
    anchor.depth,
  );
  return result.numAffectedRows === 1n;
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

/** The columns of a branch row, in the order the inserts name them. */
export const BRANCH_COLUMNS = [
  "id",
  "subject_uid",
  "conversation_id",
  "parent_branch_id",
  "fork_depth",
  "tip_depth",
  "created_at",
] as const satisfies readonly (keyof NewBranch)[];

const insertBranchQuery = insertRowsQuery("ai_gateway_branches", BRANCH_COLUMNS, 1);

export async function insertBranch(db: Kysely<StoreSchema>, branch: NewBranch): Promise<void> {
  await insertBranchQuery.run(db, ...BRANCH_COLUMNS.map((column) => branch[column]));
}

/** The columns of a message row, in the order the inserts name them. */
export const MESSAGE_COLUMNS = [
  "id",
  "subject_uid",
  "conversation_id",
  "previous_message_id",
  "type",
  "role",
  "status",
  "content",
  "metadata",
  "branch_id",
  "depth",
  "context_start_depth",
  "created_at",
  "updated_at",
  "request",
  "lease_expires_at",
] as const satisfies readonly (keyof MessageRow)[];

/**
 * The columns of a row whose lease names its holder (an in_progress response; migration 0019).
 * Other rows leave `lease_holder` out of their insert: it is null for them, and a store not
 * migrated that far yet (an import or a test writing before a later migration) can take them.
 */
const LEASED_MESSAGE_COLUMNS = [
  ...MESSAGE_COLUMNS,
  "lease_holder",
] as const satisfies readonly (keyof MessageRow)[];

/** The columns the insert of `rows` names. */
function messageColumnsOf(rows: readonly MessageRow[]): readonly (keyof MessageRow)[] {
  return rows.some((row) => row.lease_holder !== null) ? LEASED_MESSAGE_COLUMNS : MESSAGE_COLUMNS;
}

/** Insert statements of 1 to 8 message rows, kept compiled (most writes are a turn or less). */
const insertMessageQueries = new Map<string, QueryTemplate<unknown[], never>>();
const MAX_TEMPLATE_ROWS = 8;

export async function insertMessageRows(
  db: Kysely<StoreSchema>,
  rows: readonly MessageRow[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = messageColumnsOf(rows);
  if (rows.length > MAX_TEMPLATE_ROWS) {
    await db
      .insertInto("ai_gateway_messages")
      .values(
        rows.map(({ lease_holder, ...row }) =>
          lease_holder === null ? row : { ...row, lease_holder },
        ),
      )
      .execute();
    return;
  }
  const key = `${columns.length}:${rows.length}`;
  let query = insertMessageQueries.get(key);
  if (query === undefined) {
    query = insertRowsQuery("ai_gateway_messages", columns, rows.length);
    insertMessageQueries.set(key, query);
  }
  await query.run(db, ...rows.flatMap((row) => columns.map((column) => row[column])));
}

/** One write of a chain as `insertChainAtOnce` makes it. */
export interface ChainWrite {
  /** A conversation the write creates, if any. */
  readonly conversation?: {
    readonly id: string;
    readonly subject_uid: string;
    readonly created_at: string;
    readonly metadata: string;
  };
  /** The anchor whose branch the write extends when the anchor is that branch's tip. */
  readonly extend?: AnchorRow;
  /** The branch the write starts when it extends none (no anchor, or the anchor is not a tip). */
  readonly fork: NewBranch;
  /** The messages; their `branch_id` is the extended branch's or the fork's, as it turns out. */
  readonly rows: readonly MessageRow[];
}

const insertChainQueries = new Map<string, QueryTemplate<unknown[], { branch_id: string }>>();

/**
 * PostgreSQL (`writesInWith`): the whole append as one statement, atomic without a transaction
 * and one round trip instead of five. The conversation (if new), the claim of the anchor's
 * branch tip, the fork (only when the claim took no row) and the messages are each a part of
 * one WITH; concurrent continuations of one tip behave as with `claimBranchTip`: the update
 * locks the branch row, and the one that waited finds the tip moved and forks. Returns the
 * branch the messages joined.
 */
export async function insertChainAtOnce(
  db: Kysely<StoreSchema>,
  write: ChainWrite,
): Promise<string> {
  // Kept compiled for writes of up to 8 messages (a turn or less); longer ones compile each time.
  const columns = messageColumnsOf(write.rows);
  const shape = `${write.conversation !== undefined}:${write.extend !== undefined}:${write.rows.length}:${columns.length}`;
  let query = insertChainQueries.get(shape);
  if (query === undefined) {
    query = insertChainQuery(
      write.conversation !== undefined,
      write.extend !== undefined,
      write.rows.length,
      columns,
    );
    if (write.rows.length <= MAX_TEMPLATE_ROWS) insertChainQueries.set(shape, query);
  }
  const values: unknown[] = [];
  if (write.conversation !== undefined) {
    const { id, subject_uid, created_at, metadata } = write.conversation;
    values.push(id, subject_uid, created_at, metadata);
  }
  if (write.extend !== undefined) {
    const anchor = write.extend;
    values.push(
      anchor.depth + write.rows.length,
      anchor.branch_id,
      write.fork.subject_uid,
      anchor.depth,
    );
  }
  values.push(...BRANCH_COLUMNS.map((column) => write.fork[column]));
  for (const row of write.rows) {
    for (const column of columns) if (column !== "branch_id") values.push(row[column]);
  }
  const result = await query.run(db, ...values);
  const branchId = result.rows[0]?.branch_id;
  if (branchId === undefined) throw new Error("the append statement returned no row");
  return branchId;
}

/** The statement of `insertChainAtOnce` for one shape of write, values in the order it pushes. */
function insertChainQuery(
  withConversation: boolean,
  withExtend: boolean,
  count: number,
  columns: readonly string[],
): QueryTemplate<unknown[], { branch_id: string }> {
  return queryTemplate<unknown[], { branch_id: string }>(
    (_db, slot) => {
      let next = 0;
      const value = () => sql`${slot(next++)}`;
      const list = (columns: readonly string[]) =>
        sql.join(columns.map((column) => sql.ref(column)));
      const parts = [];
      if (withConversation) {
        parts.push(
          sql`new_conversation as (insert into ai_gateway_conversations (id, subject_uid, created_at, metadata) values (${value()}, ${value()}, ${value()}, ${value()}))`,
        );
      }
      if (withExtend) {
        parts.push(
          sql`claimed as (update ai_gateway_branches set tip_depth = ${value()} where id = ${value()} and subject_uid = ${value()} and tip_depth = ${value()} returning id)`,
        );
      }
      const forkValues = sql.join(BRANCH_COLUMNS.map(() => value()));
      parts.push(
        withExtend
          ? sql`forked as (insert into ai_gateway_branches (${list(BRANCH_COLUMNS)}) select ${forkValues} where not exists (select 1 from claimed) returning id)`
          : sql`forked as (insert into ai_gateway_branches (${list(BRANCH_COLUMNS)}) values (${forkValues}) returning id)`,
      );
      const branch = withExtend
        ? sql`coalesce((select id from claimed), (select id from forked))`
        : sql`(select id from forked)`;
      const rows = Array.from(
        { length: count },
        () =>
          sql`(${sql.join(columns.map((column) => (column === "branch_id" ? branch : value())))})`,
      );
      return sql<{ branch_id: string }>`with ${sql.join(parts)},
      inserted as (insert into ai_gateway_messages (${list(columns)}) values ${sql.join(rows)} returning branch_id)
      select branch_id from inserted limit 1`;
      // Longer writes are compiled for one run: not worth a prepared statement per connection.
    },
    { prepared: count <= MAX_TEMPLATE_ROWS },
  );
}

/** `insert into table (columns…) values (…), (…)` of `count` rows, values column by column. */
function insertRowsQuery(
  table: "ai_gateway_messages" | "ai_gateway_branches",
  columns: readonly string[],
  count: number,
): QueryTemplate<unknown[], never> {
  return queryTemplate<unknown[], never>((db, slot) =>
    db
      .insertInto(table)
      .values(
        Array.from({ length: count }, (_, row) =>
          Object.fromEntries(
            columns.map((column, index) => [column, slot(row * columns.length + index)]),
          ),
        ) as never,
      ),
  );
}

/**
 * Sets the final status and content of an in_progress message; false when no in_progress
 * message of the subject has this id.
 */
const finishMessageQuery = queryTemplate<[string, string, string, string, string, string], never>(
  (db, slot) =>
    db
      .updateTable("ai_gateway_messages")
      .set({ status: slot(0), content: slot(1), metadata: slot(2), updated_at: slot(3) })
      .where("id", "=", slot(4))
      .where("subject_uid", "=", slot(5))
      .where("status", "=", "in_progress"),
);

export async function finishMessageRow(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
  final: { status: string; content: string; metadata: string; updated_at: string },
): Promise<boolean> {
  const result = await finishMessageQuery.run(
    db,
    final.status,
    final.content,
    final.metadata,
    final.updated_at,
    messageId,
    subjectUid,
  );
  return result.numAffectedRows === 1n;
}

/** One branch's part of a chain: its messages with depth in (`after`, `through`]. */
export interface ChainSegment {
  readonly branch_id: string;
  readonly after: number;
  readonly through: number;
}

/**
 * The branches on the path of the chain that ends at `anchor`, from depth `fromDepth` on, oldest
 * first: a recursive walk over the (few) branches gives each branch's depth range.
 */
export async function readChainSegments(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  anchor: AnchorRow,
  fromDepth: number,
): Promise<ChainSegment[]> {
  const path = await sql<ChainSegment>`
    with recursive path (branch_id, parent_branch_id, after, through) as (
      select id, parent_branch_id, fork_depth, cast(${anchor.depth} as integer)
        from ai_gateway_branches
        where id = ${anchor.branch_id} and subject_uid = ${subjectUid}
      union all
      select b.id, b.parent_branch_id, b.fork_depth, p.after
        from ai_gateway_branches b
        join path p on b.id = p.parent_branch_id
        where b.subject_uid = ${subjectUid} and p.after >= ${fromDepth}
    )
    select branch_id, after, through from path`.execute(db);
  return path.rows
    .filter((segment) => segment.through >= fromDepth)
    .sort((a, b) => a.after - b.after);
}

/**
 * The chain that ends at `anchor`, from depth `fromDepth` on, in order. First a recursive walk
 * over the (few) branches on the path gives each branch's depth range (readChainSegments); then
 * each range is read from the unique (branch_id, depth) index in index order (no sort). The
 * cost grows with the context read, not with the conversation's size or the forks elsewhere.
 * Each row is passed to `each` in order (the same object, refilled: keep values, not the row)
 * and its results returned.
 */
export async function readChainRows<T>(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  anchor: AnchorRow,
  fromDepth: number,
  each: (row: ChainRow) => T,
): Promise<T[]> {
  const segments = await readChainSegments(db, subjectUid, anchor, fromDepth);
  const parts = await Promise.all(
    segments.map((segment) => {
      const first = Math.max(segment.after, fromDepth - 1) + 1;
      return selectRowArrays(
        db,
        db
          .selectFrom("ai_gateway_messages")
          .select([
            "id",
            // Only the segment's first row needs it from the database; every next row's
            // previous message is the row before it.
            sql<string | null>`case when depth = ${first} then previous_message_id end`.as(
              "previous_message_id",
            ),
            // As small integers: the read maps them back to shared strings, two strings fewer
            // to make per row. A value not in the lists reads as "" (reported by the gateway).
            codeOf("type", MESSAGE_TYPE_VALUES).as("type"),
            codeOf("status", MESSAGE_STATUS_VALUES).as("status"),
            "content",
            // Null for the most common value (no metadata): one string fewer to read.
            sql<string | null>`nullif(cast(metadata as text), ${EMPTY_METADATA_JSON})`.as(
              "metadata",
            ),
            "depth",
            "context_start_depth",
            "created_at",
            // Null when the row was never updated (most rows): one string fewer to read.
            sql<string | null>`case when updated_at <> created_at then updated_at end`.as(
              "updated_at",
            ),
          ])
          .where("branch_id", "=", segment.branch_id)
          .where("depth", ">=", first)
          .where("depth", "<=", segment.through)
          .where("subject_uid", "=", subjectUid)
          .orderBy("depth"),
      );
    }),
  );
  const results: T[] = [];
  // One row object, refilled for every row: `each` reads it and keeps what it needs, so a long
  // read allocates no object per row here.
  const row: { -readonly [K in keyof ChainRow]: ChainRow[K] } = {
    id: "",
    previous_message_id: null,
    type: "",
    status: "",
    content: "",
    metadata: "",
    branch_id: "",
    depth: 0,
    context_start_depth: 0,
    created_at: "",
    updated_at: "",
  };
  let previousId: string | null = null;
  for (const [segment, part] of parts.entries()) {
    row.branch_id = segments[segment]?.branch_id ?? "";
    for (const [index, values] of part.entries()) {
      const id = values[0] as string;
      const createdAt = values[8] as string;
      row.id = id;
      row.previous_message_id = index === 0 ? (values[1] as string | null) : previousId;
      row.type = MESSAGE_TYPE_VALUES[values[2] as number] ?? "";
      row.status = MESSAGE_STATUS_VALUES[values[3] as number] ?? "";
      row.content = values[4] as string;
      row.metadata = (values[5] as string | null) ?? EMPTY_METADATA_JSON;
      row.depth = values[6] as number;
      row.context_start_depth = values[7] as number;
      row.created_at = createdAt;
      row.updated_at = (values[9] as string | null) ?? createdAt;
      results.push(each(row));
      previousId = id;
    }
  }
  return results;
}

/**
 * A page of a conversation's messages in the order they were written (every branch:
 * created_at, depth, id), with no columns chosen yet.
 */
export function conversationPageQuery(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
  page: { readonly limit: number; readonly offset: number },
) {
  return db
    .selectFrom("ai_gateway_messages")
    .where("conversation_id", "=", conversationId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("created_at")
    .orderBy("depth")
    .orderBy("id")
    .limit(page.limit)
    .offset(page.offset);
}

/** Messages of a conversation in the order they were written (every branch), paged. */
export async function listConversationRows(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
  page: { readonly limit: number; readonly offset: number },
): Promise<MessageRow[]> {
  return conversationPageQuery(db, subjectUid, conversationId, page).selectAll().execute();
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
