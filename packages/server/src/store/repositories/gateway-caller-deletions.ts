import type { Kysely } from "kysely";
import { queryTemplate } from "../query-template.js";
import type { StoreSchema } from "../schema.js";

/** What a caller deleted: a conversation, a response, or one item of a conversation. */
export type CallerDeletionKind = "conversation" | "response" | "item";

/**
 * Records that a subject deleted an id (a tombstone: the deleted rows are kept). Deleting an
 * id twice keeps the first deletion.
 */
export async function insertCallerDeletion(
  db: Kysely<StoreSchema>,
  row: {
    readonly subjectUid: string;
    readonly objectId: string;
    readonly kind: CallerDeletionKind;
    readonly deletedAt: string;
  },
): Promise<void> {
  await db
    .insertInto("ai_gateway_caller_deletions")
    .values({
      subject_uid: row.subjectUid,
      object_id: row.objectId,
      kind: row.kind,
      deleted_at: row.deletedAt,
    })
    .onConflict((conflict) => conflict.columns(["subject_uid", "object_id"]).doNothing())
    .execute();
}

/** Which of these ids the subject deleted. */
export async function findCallerDeletions(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  objectIds: readonly string[],
): Promise<Set<string>> {
  const deleted = new Set<string>();
  // Bounded IN lists: SQLite and PostgreSQL both take 500 parameters in one statement.
  for (let start = 0; start < objectIds.length; start += 500) {
    const ids = objectIds.slice(start, start + 500);
    const rows = await db
      .selectFrom("ai_gateway_caller_deletions")
      .select("object_id")
      .where("subject_uid", "=", subjectUid)
      .where("object_id", "in", ids)
      .execute();
    for (const row of rows) deleted.add(row.object_id);
  }
  return deleted;
}

const messageOrItsConversationDeletedQuery = queryTemplate<
  [string, string, string, string],
  { readonly object_id: string }
>((db, slot) =>
  db
    .selectFrom("ai_gateway_caller_deletions")
    .select("object_id")
    .where("subject_uid", "=", slot(0))
    .where((where) =>
      where.or([
        where("object_id", "=", slot(1)),
        where(
          "object_id",
          "=",
          where
            .selectFrom("ai_gateway_messages")
            .select("conversation_id")
            .where("id", "=", slot(2))
            .where("subject_uid", "=", slot(3)),
        ),
      ]),
    )
    .limit(1),
);

/**
 * Whether the subject deleted this message or its conversation: one prepared statement, so
 * that the routes that read or continue a response pay one index read for it
 * (bench/server/caller-deletions.ts).
 */
export async function isMessageOrItsConversationDeleted(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  messageId: string,
): Promise<boolean> {
  const { rows } = await messageOrItsConversationDeletedQuery.run(
    db,
    subjectUid,
    messageId,
    messageId,
    subjectUid,
  );
  return rows.length > 0;
}
