import type { Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";
import { conversationPageQuery } from "./gateway-messages.js";

/**
 * The ids of a page of a conversation's messages (all branches, in the order written:
 * created_at, depth, id), read without their content: the console then reads the rows by id in
 * chunks (server/console/read-page.ts).
 */
export async function listConversationMessageIds(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
  page: { readonly limit: number; readonly offset: number },
): Promise<string[]> {
  const rows = await conversationPageQuery(db, subjectUid, conversationId, page)
    .select("id")
    .execute();
  return rows.map((row) => row.id);
}
