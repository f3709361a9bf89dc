import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * PostgreSQL: the conversation counts (migration 0017, matched by subject in 0021) update each
 * conversation a statement's messages belong to by its subject and id, one statement each
 * (usually one: an append writes to one conversation). Joined with the transition table, the
 * update could not know the subject when planned and read every partition of a partitioned
 * store's conversations (docs/scale.md, "Partitions"); given the subject, it is planned on one.
 * SQLite's triggers are per row already: nothing changes there.
 */
export const conversationCountsPerSubjectMigration: Migration = {
  name: "0022-conversation-counts-per-subject",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "postgres") return;
    await sql`create or replace function verbatim_conversation_counts_insert() returns trigger
      language plpgsql as $$
      declare added record;
      begin
        for added in
          select subject_uid, conversation_id, count(*) as n, max(created_at) as newest
          from verbatim_new_messages group by subject_uid, conversation_id
        loop
          update ai_gateway_conversations c set
            message_count = c.message_count + added.n,
            last_message_at = greatest(c.last_message_at, added.newest)
          where c.subject_uid = added.subject_uid and c.id = added.conversation_id;
        end loop;
        return null;
      end $$`.execute(db);
    await sql`create or replace function verbatim_conversation_counts_delete() returns trigger
      language plpgsql as $$
      declare removed record;
      begin
        for removed in
          select subject_uid, conversation_id, count(*) as n
          from verbatim_old_messages group by subject_uid, conversation_id
        loop
          update ai_gateway_conversations c set
            message_count = c.message_count - removed.n,
            last_message_at = (select max(m.created_at) from ai_gateway_messages m
              where m.subject_uid = removed.subject_uid and m.conversation_id = removed.conversation_id)
          where c.subject_uid = removed.subject_uid and c.id = removed.conversation_id;
        end loop;
        return null;
      end $$`.execute(db);
  },
};
