import { sql, type Kysely, type Selectable } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import { queryTemplate } from "../query-template.js";
import type { GatewayConversationTable, StoreSchema } from "../schema.js";

/** A conversation as the gateway writes and reads it (its counts are the triggers'). */
export type ConversationRow = Omit<
  Selectable<GatewayConversationTable>,
  "message_count" | "last_message_at"
>;

const insertConversationQuery = queryTemplate<[string, string, string, string], never>((db, slot) =>
  db.insertInto("ai_gateway_conversations").values({
    id: slot(0),
    subject_uid: slot(1),
    created_at: slot(2),
    metadata: slot(3),
  }),
);

export async function insertConversation(
  db: Kysely<StoreSchema>,
  row: ConversationRow,
): Promise<void> {
  await insertConversationQuery.run(db, row.id, row.subject_uid, row.created_at, row.metadata);
}

const findConversationQuery = queryTemplate<[string, string], ConversationRow>((db, slot) =>
  db
    .selectFrom("ai_gateway_conversations")
    // Columns by name: a prepared statement's columns must not change when a table gains one.
    .select(["id", "subject_uid", "created_at", "metadata"])
    .where("id", "=", slot(0))
    .where("subject_uid", "=", slot(1)),
);

export async function findConversation(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
): Promise<ConversationRow | undefined> {
  const { rows } = await findConversationQuery.run(db, conversationId, subjectUid);
  return rows[0];
}

/** Replaces a conversation's caller metadata; false when the subject has no such conversation. */
export async function updateConversationMetadata(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
  metadata: string,
): Promise<boolean> {
  const result = await db
    .updateTable("ai_gateway_conversations")
    .set({ metadata })
    .where("id", "=", conversationId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The id of a conversation's newest message (the tip of the chain written last), or undefined
 * when the conversation has none.
 */
export async function findNewestMessageId(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("ai_gateway_messages")
    .select("id")
    .where("conversation_id", "=", conversationId)
    .where("subject_uid", "=", subjectUid)
    .orderBy("created_at", "desc")
    .orderBy("depth", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/**
 * Which of these messages are responses stored with `store: false` (their request settings
 * echo `"store": false`): kept for the operator, not readable by the caller. Filtered in the
 * database, so the settings themselves are not read.
 */
export async function findUnstoredResponseIds(
  database: { readonly db: Kysely<StoreSchema>; readonly capabilities: DialectCapabilities },
  subjectUid: string,
  messageIds: readonly string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  const storeSetting =
    database.capabilities.dialect === "sqlite"
      ? sql<number | null>`json_extract(request, '$.echo.store')`
      : sql<string | null>`(request::jsonb -> 'echo' ->> 'store')`;
  const unstored = database.capabilities.dialect === "sqlite" ? 0 : "false";
  for (let start = 0; start < messageIds.length; start += 500) {
    const rows = await database.db
      .selectFrom("ai_gateway_messages")
      .select("id")
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", messageIds.slice(start, start + 500))
      .where("request", "is not", null)
      .where(storeSetting, "=", unstored)
      .execute();
    for (const row of rows) found.add(row.id);
  }
  return found;
}
