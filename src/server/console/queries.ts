import type { StoreDatabase } from "../../store/index.js";

/**
 * Operator reads across subjects (console routes only): the stores are scoped to one subject
 * per call, so the console first finds which subject owns an id, then reads through the store
 * as that subject.
 */
export interface ConversationSummaryRow {
  readonly id: string;
  readonly subject_uid: string;
  readonly created_at: string;
  readonly message_count: number;
  readonly last_message_at: string | null;
}

export async function listConversations(
  database: StoreDatabase,
  filter: { readonly subjectUid?: string; readonly limit: number; readonly offset: number },
): Promise<ConversationSummaryRow[]> {
  let query = database.db
    .selectFrom("ai_gateway_conversations as c")
    .leftJoin("ai_gateway_messages as m", "m.conversation_id", "c.id")
    .select((eb) => [
      "c.id",
      "c.subject_uid",
      "c.created_at",
      eb.fn.count<number>("m.id").as("message_count"),
      eb.fn.max("m.created_at").as("last_message_at"),
    ])
    .groupBy(["c.id", "c.subject_uid", "c.created_at"]);
  if (filter.subjectUid !== undefined) query = query.where("c.subject_uid", "=", filter.subjectUid);
  const rows = await query
    .orderBy("c.created_at", "desc")
    .orderBy("c.id", "desc")
    .limit(filter.limit)
    .offset(filter.offset)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    subject_uid: row.subject_uid,
    created_at: row.created_at,
    message_count: Number(row.message_count),
    last_message_at: row.last_message_at ?? null,
  }));
}

export async function conversationOwner(
  database: StoreDatabase,
  conversationId: string,
): Promise<string | undefined> {
  const row = await database.db
    .selectFrom("ai_gateway_conversations")
    .select("subject_uid")
    .where("id", "=", conversationId)
    .executeTakeFirst();
  return row?.subject_uid;
}

/** The newest message of a conversation (any branch). */
export async function latestMessageId(
  database: StoreDatabase,
  conversationId: string,
): Promise<string | undefined> {
  const row = await database.db
    .selectFrom("ai_gateway_messages")
    .select("id")
    .where("conversation_id", "=", conversationId)
    .orderBy("created_at", "desc")
    .orderBy("depth", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}
