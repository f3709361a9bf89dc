import type { Kysely, Selectable } from "kysely";
import { queryTemplate } from "../query-template.js";
import type { GatewayConversationTable, StoreSchema } from "../schema.js";

export type ConversationRow = Selectable<GatewayConversationTable>;

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
