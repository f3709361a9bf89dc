import type { Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";
import { conversationPageQuery, readChainSegments, type AnchorRow } from "./gateway-messages.js";

/**
 * The ids of a page of a conversation's messages (all branches, in the order written:
 * created_at, depth, id), read without their content: the console then reads the rows by id in
 * chunks (gateway/console/read-page.ts).
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

/**
 * Of these messages of the subject, the deepest one with recorded request settings (the newest
 * of a chain's): its id and settings JSON, read without its content.
 */
export async function findDeepestRequestRow(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageIds: readonly string[],
): Promise<{ readonly id: string; readonly request: string | null } | undefined> {
  if (messageIds.length === 0) return undefined;
  return db
    .selectFrom("ai_gateway_messages")
    .select(["id", "request"])
    .where("id", "in", [...messageIds])
    .where("subject_uid", "=", subjectUid)
    .where("request", "is not", null)
    .orderBy("depth", "desc")
    .limit(1)
    .executeTakeFirst();
}

/**
 * The ids of the chain that ends at `anchor`, from depth `fromDepth` on, oldest first, read
 * without their content (the console then reads the messages by id in chunks: one read of a
 * 1,000-message context blocked the event loop for 45–125 ms). The branches on the path as the
 * store's chain read finds them (readChainSegments), then each branch's depth range from the
 * (branch_id, depth) index.
 */
export async function listChainMessageIds(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  anchor: AnchorRow,
  fromDepth: number,
): Promise<string[]> {
  const segments = await readChainSegments(db, subjectUid, anchor, fromDepth);
  const parts = await Promise.all(
    segments.map((segment) =>
      db
        .selectFrom("ai_gateway_messages")
        .select("id")
        .where("branch_id", "=", segment.branch_id)
        .where("depth", ">", Math.max(segment.after, fromDepth - 1))
        .where("depth", "<=", segment.through)
        .where("subject_uid", "=", subjectUid)
        .orderBy("depth")
        .execute(),
    ),
  );
  return parts.flatMap((rows) => rows.map((row) => row.id));
}
