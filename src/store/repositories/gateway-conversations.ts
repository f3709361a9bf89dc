import type { Kysely, Selectable } from "kysely";
import type { GatewayConversationTable, StoreSchema } from "../schema.js";

export type ConversationRow = Selectable<GatewayConversationTable>;

export async function insertConversation(
  db: Kysely<StoreSchema>,
  row: ConversationRow,
): Promise<void> {
  await db.insertInto("ai_gateway_conversations").values(row).execute();
}

export async function findConversation(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
): Promise<ConversationRow | undefined> {
  return db
    .selectFrom("ai_gateway_conversations")
    .selectAll()
    .where("id", "=", conversationId)
    .where("subject_uid", "=", subjectUid)
    .executeTakeFirst();
}
