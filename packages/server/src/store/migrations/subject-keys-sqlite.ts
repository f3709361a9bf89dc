import { sql, type Kysely } from "kysely";
import { DROPPED_INDEXES, SUBJECT_INDEXES } from "./subject-keys-indexes.js";

/**
 * Migration 0021 on SQLite, which cannot change a table's primary key: each table is made again
 * under its new keys (SQLite's "make other kinds of table schema changes" procedure), its rows
 * copied with their rowids (the full-text indexes refer to rows by rowid), the old table
 * dropped, the new one renamed, and its indexes and triggers made again. The runner turns
 * foreign keys off around the migration and checks them all before the commit (migrate.ts).
 * Parents go before their children so each foreign key is made against its final table.
 */
const TABLES: readonly (readonly [name: string, definition: string])[] = [
  [
    "ai_gateway_conversations",
    `"id" text not null, "subject_uid" text not null, "created_at" text not null,
     "metadata" text not null, "message_count" integer default 0 not null, "last_message_at" text,
     constraint "ai_gateway_conversations_pkey" primary key ("subject_uid", "id")`,
  ],
  [
    "ai_gateway_branches",
    `"id" text not null, "subject_uid" text not null, "conversation_id" text not null,
     "parent_branch_id" text, "fork_depth" integer not null, "tip_depth" integer not null,
     "created_at" text not null,
     constraint "ai_gateway_branches_pkey" primary key ("subject_uid", "id"),
     constraint "ai_gateway_branches_conversation_fkey" foreign key ("subject_uid", "conversation_id")
       references "ai_gateway_conversations" ("subject_uid", "id"),
     constraint "ai_gateway_branches_parent_fkey" foreign key ("subject_uid", "parent_branch_id")
       references "ai_gateway_branches" ("subject_uid", "id")`,
  ],
  [
    "ai_gateway_messages",
    `"id" text not null, "subject_uid" text not null, "conversation_id" text not null,
     "previous_message_id" text, "type" text not null, "role" text not null,
     "status" text not null, "content" text not null, "metadata" text not null,
     "branch_id" text not null, "depth" integer not null, "context_start_depth" integer not null,
     "created_at" text not null, "updated_at" text not null, "request" text,
     "lease_expires_at" text, "lease_holder" text,
     constraint "ai_gateway_messages_pkey" primary key ("subject_uid", "id"),
     constraint "ai_gateway_messages_branch_depth" unique ("subject_uid", "branch_id", "depth"),
     constraint "ai_gateway_messages_conversation_fkey" foreign key ("subject_uid", "conversation_id")
       references "ai_gateway_conversations" ("subject_uid", "id"),
     constraint "ai_gateway_messages_branch_fkey" foreign key ("subject_uid", "branch_id")
       references "ai_gateway_branches" ("subject_uid", "id"),
     constraint "ai_gateway_messages_previous_fkey" foreign key ("subject_uid", "previous_message_id")
       references "ai_gateway_messages" ("subject_uid", "id")`,
  ],
  [
    "ai_gateway_recorded_calls",
    `"id" text not null, "subject_uid" text not null, "conversation_id" text not null,
     "wire_format" text not null, "path" text not null, "model" text not null,
     "tip_prefix_sha256" text not null, "message_count" integer not null,
     "matched_count" integer not null, "previous_call_id" text, "status_code" integer not null,
     "request_headers" text not null, "request_body" text not null,
     "response_headers" text not null, "response_body_base64" text not null,
     "redacted" integer not null, "input_tokens" integer, "output_tokens" integer,
     "cache_read_tokens" integer, "cache_write_tokens" integer, "duration_ms" integer not null,
     "created_at" text not null, "body_storage" integer default 0 not null,
     "request_manifest" blob, "request_base_call_id" text, "response_manifest" blob,
     "request_size" integer, "response_size" integer, "kept_order" bigint,
     constraint "ai_gateway_recorded_calls_pkey" primary key ("subject_uid", "id")`,
  ],
  [
    "background_agent_jobs",
    `"id" text not null, "subject_uid" text not null, "conversation_id" text not null,
     "status" text not null, "retry_budget" integer not null, "attempts" integer not null,
     "metadata" text not null, "result" text, "created_at" text not null,
     "updated_at" text not null, "ended_at" text,
     constraint "background_agent_jobs_pkey" primary key ("subject_uid", "id")`,
  ],
  [
    "background_agent_job_turns",
    `"id" text not null, "subject_uid" text not null, "job_id" text not null,
     "turn_index" integer not null, "attempt" integer not null, "revision" integer not null,
     "status" text not null, "item_count" integer not null, "created_at" text not null,
     "updated_at" text not null,
     constraint "background_agent_job_turns_pkey" primary key ("subject_uid", "id"),
     constraint "background_agent_job_turns_index" unique ("subject_uid", "job_id", "turn_index"),
     constraint "background_agent_job_turns_job_fkey" foreign key ("subject_uid", "job_id")
       references "background_agent_jobs" ("subject_uid", "id")`,
  ],
  [
    "background_agent_job_turn_items",
    `"turn_id" text not null, "position" integer not null, "revision" integer not null,
     "item_key" text not null, "item" text not null, "subject_uid" text not null,
     "job_id" text not null, "created_at" text not null,
     constraint "background_agent_job_turn_items_primary" primary key ("subject_uid", "turn_id", "position"),
     constraint "background_agent_job_turn_items_key" unique ("subject_uid", "turn_id", "item_key"),
     constraint "background_agent_job_turn_items_turn_fkey" foreign key ("subject_uid", "turn_id")
       references "background_agent_job_turns" ("subject_uid", "id")`,
  ],
  [
    "background_agent_job_wake_events",
    `"id" text not null, "subject_uid" text not null, "conversation_id" text not null,
     "job_id" text not null, "payload" text not null, "created_at" text not null,
     "claimed_at" text, "claimed_by" text,
     constraint "background_agent_job_wake_events_pkey" primary key ("subject_uid", "id"),
     constraint "background_agent_job_wake_events_job_fkey" foreign key ("subject_uid", "job_id")
       references "background_agent_jobs" ("subject_uid", "id")`,
  ],
];

/** The indexes of the rebuilt tables that stay as they were. */
const KEPT_INDEXES: readonly (readonly [name: string, definition: string])[] = [
  ["ai_gateway_conversations_newest", "ai_gateway_conversations (created_at, id)"],
  [
    "ai_gateway_conversations_subject_newest",
    "ai_gateway_conversations (subject_uid, created_at, id)",
  ],
  [
    "ai_gateway_messages_lease",
    "ai_gateway_messages (lease_expires_at) where status = 'in_progress'",
  ],
  ["ai_gateway_messages_newest", "ai_gateway_messages (created_at, conversation_id, id)"],
  [
    "ai_gateway_messages_lease_holder",
    "ai_gateway_messages (lease_holder) where status = 'in_progress'",
  ],
  ["ai_gateway_recorded_calls_tip", "ai_gateway_recorded_calls (subject_uid, tip_prefix_sha256)"],
  ["ai_gateway_recorded_calls_created", "ai_gateway_recorded_calls (created_at)"],
  [
    "ai_gateway_recorded_calls_storage",
    "ai_gateway_recorded_calls (body_storage, id) where body_storage = 0",
  ],
  [
    "ai_gateway_recorded_calls_unplaced",
    "ai_gateway_recorded_calls (subject_uid, kept_order, created_at, id) where conversation_id = ''",
  ],
  [
    "background_agent_job_turn_items_newest",
    "background_agent_job_turn_items (created_at, job_id, item_key)",
  ],
  ["background_agent_jobs_conversation", "background_agent_jobs (subject_uid, conversation_id)"],
  ["background_agent_jobs_newest", "background_agent_jobs (created_at, id)"],
  ["background_agent_jobs_subject_newest", "background_agent_jobs (subject_uid, created_at, id)"],
];

/** The conversation counts' triggers, matching messages to conversations by subject. */
const COUNT_TRIGGERS = [
  `create trigger ai_gateway_conversations_count_insert
    after insert on ai_gateway_messages begin
      update ai_gateway_conversations set
        message_count = message_count + 1,
        last_message_at = case
          when last_message_at is null or new.created_at > last_message_at
          then new.created_at else last_message_at end
      where subject_uid = new.subject_uid and id = new.conversation_id;
    end`,
  `create trigger ai_gateway_conversations_count_delete
    after delete on ai_gateway_messages begin
      update ai_gateway_conversations set
        message_count = message_count - 1,
        last_message_at = (select max(m.created_at) from ai_gateway_messages m
          where m.subject_uid = old.subject_uid and m.conversation_id = old.conversation_id)
      where subject_uid = old.subject_uid and id = old.conversation_id;
    end`,
];

const COUNT_TRIGGER_NAMES = new Set([
  "ai_gateway_conversations_count_insert",
  "ai_gateway_conversations_count_delete",
]);

export async function rebuildSqliteTables(db: Kysely<unknown>): Promise<void> {
  const rebuilt = new Set(TABLES.map(([name]) => name));
  // The full-text triggers are kept as written (they refer to rows by rowid, which the copy keeps).
  const triggers = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master where type = 'trigger'
      and tbl_name in (${sql.join([...rebuilt])})`.execute(db);
  // Dropped first: a trigger that names a table being renamed stops the rename.
  for (const trigger of triggers.rows) await sql`drop trigger ${sql.id(trigger.name)}`.execute(db);
  for (const [name, definition] of TABLES) {
    const columns = await sql<{
      name: string;
    }>`select name from pragma_table_info(${name})`.execute(db);
    const list = sql.join(columns.rows.map((column) => sql.id(column.name)));
    const fresh = `${name}_subject_keys`;
    await sql`create table ${sql.id(fresh)} (${sql.raw(definition)})`.execute(db);
    await sql`insert into ${sql.id(fresh)} (rowid, ${list}) select rowid, ${list} from ${sql.id(name)}`.execute(
      db,
    );
    await sql`drop table ${sql.id(name)}`.execute(db);
    await sql`alter table ${sql.id(fresh)} rename to ${sql.id(name)}`.execute(db);
  }
  for (const name of DROPPED_INDEXES) await sql`drop index if exists ${sql.id(name)}`.execute(db);
  const indexes = [...KEPT_INDEXES, ...SUBJECT_INDEXES];
  for (const [name, definition] of indexes) {
    await sql`create index ${sql.id(name)} on ${sql.raw(definition)}`.execute(db);
  }
  for (const trigger of triggers.rows) {
    if (!COUNT_TRIGGER_NAMES.has(trigger.name)) await sql.raw(trigger.sql).execute(db);
  }
  for (const trigger of COUNT_TRIGGERS) await sql.raw(trigger).execute(db);
}
