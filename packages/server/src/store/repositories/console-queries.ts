import { sql } from "kysely";
import type { StoreDatabase } from "../database.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";

/**
 * Operator reads across subjects (console routes only): the stores are scoped to one subject
 * per call, so the console first finds which subject owns an id (`conversationOwner`), then
 * reads as that subject: every statement after names it (store/subject-keys.ts).
 */
export interface ConversationSummaryRow {
  readonly id: string;
  readonly subject_uid: string;
  readonly created_at: string;
  readonly message_count: number;
  readonly last_message_at: string | null;
}

/** Narrowing of the console lists (docs/server/console.md, "Console"). */
export interface ListFilter {
  readonly subjectUid?: string | undefined;
  /** Subjects starting with this text (taken literally: `%` and `_` are not wildcards). */
  readonly subjectPrefix?: string | undefined;
  /** Conversations with a message answered by this model. */
  readonly model?: string | undefined;
  /** Created at or after this instant (ISO 8601). */
  readonly createdAfter?: string | undefined;
  /** Created before this instant (ISO 8601). */
  readonly createdBefore?: string | undefined;
}

/** An instant as the store writes them (UTC, milliseconds, `Z`), for comparing text. */
export function instant(text: string): string {
  return new Date(text).toISOString();
}

/** `column LIKE 'prefix%'` with the prefix's own wildcards escaped. */
export function startsWith(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** The sort key of a list's row, newest first: its creation time, then its id. */
export type ListKey = readonly [createdAt: string, id: string];

/**
 * Conversations newest first, the page after `after` (a key, not an offset: the page is found
 * through an index on `created_at, id`, or `subject_uid, created_at, id` for one subject, at any
 * depth). Each row's counts are kept on the conversation (migration 0017), not counted here.
 */
export async function listConversations(
  database: StoreDatabase,
  filter: ListFilter & { readonly limit: number; readonly after?: ListKey | undefined },
): Promise<ConversationSummaryRow[]> {
  let query = database.db
    .selectFrom("ai_gateway_conversations as c")
    .select(["c.id", "c.subject_uid", "c.created_at", "c.message_count", "c.last_message_at"]);
  if (filter.subjectUid !== undefined) query = query.where("c.subject_uid", "=", filter.subjectUid);
  if (filter.subjectPrefix !== undefined) {
    query = query.where(
      sql<boolean>`c.subject_uid like ${startsWith(filter.subjectPrefix)} escape '\\'`,
    );
  }
  if (filter.createdAfter !== undefined)
    query = query.where("c.created_at", ">=", filter.createdAfter);
  if (filter.createdBefore !== undefined)
    query = query.where("c.created_at", "<", filter.createdBefore);
  if (filter.after !== undefined) {
    const [createdAt, id] = filter.after;
    query = query.where((eb) =>
      eb(eb.refTuple("c.created_at", "c.id"), "<", eb.tuple(createdAt, id)),
    );
  }
  if (filter.model !== undefined) {
    const model =
      database.capabilities.dialect === "sqlite"
        ? sql`json_extract(answered.metadata, '$.gateway.model')`
        : sql`(answered.metadata -> 'gateway' ->> 'model')`;
    query = query.where(
      sql<boolean>`exists (select 1 from ai_gateway_messages answered
        where answered.subject_uid = c.subject_uid and answered.conversation_id = c.id
          and ${model} = ${filter.model})`,
    );
  }
  const page = query.orderBy("c.created_at", "desc").orderBy("c.id", "desc").limit(filter.limit);
  // Without a subject the operator lists every subject's conversations (a prefix names no one
  // subject either): across subjects by nature, one keyset page at a time.
  const rows = await (
    filter.subjectUid === undefined ? page.modifyEnd(sql.raw(ACROSS_SUBJECTS)) : page
  ).execute();
  return rows.map((row) => ({
    id: row.id,
    subject_uid: row.subject_uid,
    created_at: row.created_at,
    message_count: Number(row.message_count),
    last_message_at: row.last_message_at ?? null,
  }));
}

/**
 * The subject that owns a conversation the console was given by id alone (through the index on
 * conversations' `id`, migration 0021); undefined when there is none.
 */
export async function conversationOwner(
  database: StoreDatabase,
  conversationId: string,
): Promise<string | undefined> {
  const row = await database.db
    .selectFrom("ai_gateway_conversations")
    .select("subject_uid")
    .where("id", "=", conversationId)
    // The operator names a conversation, not its subject: the one read that finds the owner.
    .modifyEnd(sql.raw(ACROSS_SUBJECTS))
    .executeTakeFirst();
  return row?.subject_uid;
}

/** The newest message of a conversation of the subject (any branch). */
export async function latestMessageId(
  database: StoreDatabase,
  subjectUid: string,
  conversationId: string,
): Promise<string | undefined> {
  const row = await database.db
    .selectFrom("ai_gateway_messages")
    .select("id")
    .where("subject_uid", "=", subjectUid)
    .where("conversation_id", "=", conversationId)
    .orderBy("created_at", "desc")
    .orderBy("depth", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/** How many messages a conversation of the subject holds (all branches). */
export async function countMessages(
  database: StoreDatabase,
  subjectUid: string,
  conversationId: string,
): Promise<number> {
  const row = await database.db
    .selectFrom("ai_gateway_messages")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("subject_uid", "=", subjectUid)
    .where("conversation_id", "=", conversationId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
