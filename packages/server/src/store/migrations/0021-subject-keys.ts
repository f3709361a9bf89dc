import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";
import { DROPPED_INDEXES, SUBJECT_INDEXES } from "./subject-keys-indexes.js";
import { rebuildSqliteTables } from "./subject-keys-sqlite.js";

/**
 * The subject in every key (docs/scale.md, "Keys"): the tables a subject owns get `subject_uid`
 * first in their primary keys, unique constraints and foreign keys, so PostgreSQL's hash
 * partitions and Citus can hold each subject's rows together and check each key inside one
 * partition. Ids stay unique in practice (random), but the database now only holds them unique
 * per subject; a plain index on `id` remains where an operator's route is given an id alone
 * (conversations, recorded calls, jobs) and must first find its owner.
 *
 * PostgreSQL changes the constraints in place (each table is locked while its key is rebuilt;
 * the whole migration is one transaction). SQLite cannot change a primary key: its tables are
 * rebuilt with the same rows, rowids and triggers (subject-keys-sqlite.ts).
 */
export const subjectKeysMigration: Migration = {
  name: "0021-subject-keys",
  rebuildsTables: true,
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect === "sqlite") await rebuildSqliteTables(db);
    else await changePostgresKeys(db);
  },
};

/** The new primary and unique keys, by table. */
const POSTGRES_KEYS: readonly (readonly [table: string, constraints: string])[] = [
  [
    "ai_gateway_conversations",
    "add constraint ai_gateway_conversations_pkey primary key (subject_uid, id)",
  ],
  ["ai_gateway_branches", "add constraint ai_gateway_branches_pkey primary key (subject_uid, id)"],
  [
    "ai_gateway_messages",
    `add constraint ai_gateway_messages_pkey primary key (subject_uid, id),
     add constraint ai_gateway_messages_branch_depth unique (subject_uid, branch_id, depth)`,
  ],
  [
    "ai_gateway_recorded_calls",
    "add constraint ai_gateway_recorded_calls_pkey primary key (subject_uid, id)",
  ],
  [
    "background_agent_jobs",
    "add constraint background_agent_jobs_pkey primary key (subject_uid, id)",
  ],
  [
    "background_agent_job_turns",
    `add constraint background_agent_job_turns_pkey primary key (subject_uid, id),
     add constraint background_agent_job_turns_index unique (subject_uid, job_id, turn_index)`,
  ],
  [
    "background_agent_job_turn_items",
    `add constraint background_agent_job_turn_items_primary primary key (subject_uid, turn_id, position),
     add constraint background_agent_job_turn_items_key unique (subject_uid, turn_id, item_key)`,
  ],
  [
    "background_agent_job_wake_events",
    "add constraint background_agent_job_wake_events_pkey primary key (subject_uid, id)",
  ],
];

/** The foreign keys, each with the subject first on both sides. */
const SUBJECT_FOREIGN_KEYS: readonly (readonly [
  table: string,
  name: string,
  columns: string,
  references: string,
])[] = [
  [
    "ai_gateway_branches",
    "ai_gateway_branches_conversation_fkey",
    "subject_uid, conversation_id",
    "ai_gateway_conversations",
  ],
  [
    "ai_gateway_branches",
    "ai_gateway_branches_parent_fkey",
    "subject_uid, parent_branch_id",
    "ai_gateway_branches",
  ],
  [
    "ai_gateway_messages",
    "ai_gateway_messages_conversation_fkey",
    "subject_uid, conversation_id",
    "ai_gateway_conversations",
  ],
  [
    "ai_gateway_messages",
    "ai_gateway_messages_branch_fkey",
    "subject_uid, branch_id",
    "ai_gateway_branches",
  ],
  [
    "ai_gateway_messages",
    "ai_gateway_messages_previous_fkey",
    "subject_uid, previous_message_id",
    "ai_gateway_messages",
  ],
  [
    "background_agent_job_turns",
    "background_agent_job_turns_job_fkey",
    "subject_uid, job_id",
    "background_agent_jobs",
  ],
  [
    "background_agent_job_turn_items",
    "background_agent_job_turn_items_turn_fkey",
    "subject_uid, turn_id",
    "background_agent_job_turns",
  ],
  [
    "background_agent_job_wake_events",
    "background_agent_job_wake_events_job_fkey",
    "subject_uid, job_id",
    "background_agent_jobs",
  ],
];

const KEYED_TABLES = POSTGRES_KEYS.map(([table]) => table);

async function changePostgresKeys(db: Kysely<unknown>): Promise<void> {
  // Foreign keys first (each depends on the key it references), then the keys, by the names
  // the database gave them (older databases were created by earlier code).
  const constraints = await sql<{ table: string; name: string; kind: string }>`
    select c.conrelid::regclass::text as "table", c.conname as name, c.contype as kind
    from pg_constraint c join pg_class t on t.oid = c.conrelid
    where t.relnamespace = to_regnamespace(current_schema())
      and t.relname in (${sql.join(KEYED_TABLES)}) and c.contype in ('f', 'p', 'u')
    order by c.contype`.execute(db);
  for (const kind of ["f", "p", "u"]) {
    for (const constraint of constraints.rows.filter((row) => row.kind === kind)) {
      await sql`alter table ${sql.raw(constraint.table)} drop constraint ${sql.id(constraint.name)}`.execute(
        db,
      );
    }
  }
  for (const [table, keys] of POSTGRES_KEYS) {
    await sql`alter table ${sql.id(table)} ${sql.raw(keys)}`.execute(db);
  }
  for (const [table, name, columns, references] of SUBJECT_FOREIGN_KEYS) {
    await sql`alter table ${sql.id(table)} add constraint ${sql.id(name)}
      foreign key (${sql.raw(columns)}) references ${sql.id(references)} (subject_uid, id)`.execute(
      db,
    );
  }
  for (const name of DROPPED_INDEXES) await sql`drop index if exists ${sql.id(name)}`.execute(db);
  for (const [name, definition] of SUBJECT_INDEXES) {
    await sql`create index ${sql.id(name)} on ${sql.raw(definition)}`.execute(db);
  }
  // The conversation counts: each statement's rows matched to their conversations by subject.
  await sql`create or replace function verbatim_conversation_counts_insert() returns trigger
      language plpgsql as $$
      begin
        update ai_gateway_conversations c set
          message_count = c.message_count + n.added,
          last_message_at = greatest(c.last_message_at, n.newest)
        from (select subject_uid, conversation_id, count(*) as added, max(created_at) as newest
              from verbatim_new_messages group by subject_uid, conversation_id) n
        where c.subject_uid = n.subject_uid and c.id = n.conversation_id;
        return null;
      end $$`.execute(db);
  await sql`create or replace function verbatim_conversation_counts_delete() returns trigger
      language plpgsql as $$
      begin
        update ai_gateway_conversations c set
          message_count = c.message_count - o.removed,
          last_message_at = (select max(m.created_at) from ai_gateway_messages m
            where m.subject_uid = c.subject_uid and m.conversation_id = c.id)
        from (select subject_uid, conversation_id, count(*) as removed
              from verbatim_old_messages group by subject_uid, conversation_id) o
        where c.subject_uid = o.subject_uid and c.id = o.conversation_id;
        return null;
      end $$`.execute(db);
}
