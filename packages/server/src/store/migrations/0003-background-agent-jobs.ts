import type { Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * Background agent jobs (SPEC B7, B8, B11, B13): jobs, their turns, the append-only stream of
 * turn items and the wake-event outbox (docs/store.md, docs/trajectories.md).
 */
export const backgroundAgentJobsMigration: Migration = {
  name: "0003-background-agent-jobs",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    const json = capabilities.jsonColumnType;
    await db.schema
      .createTable("background_agent_jobs")
      .addColumn("id", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text", (column) => column.notNull())
      .addColumn("status", "text", (column) => column.notNull())
      .addColumn("retry_budget", "integer", (column) => column.notNull())
      .addColumn("attempts", "integer", (column) => column.notNull())
      .addColumn("metadata", json, (column) => column.notNull())
      .addColumn("result", json)
      .addColumn("created_at", "text", (column) => column.notNull())
      .addColumn("updated_at", "text", (column) => column.notNull())
      .addColumn("ended_at", "text")
      .execute();
    await db.schema
      .createIndex("background_agent_jobs_conversation")
      .on("background_agent_jobs")
      .columns(["subject_uid", "conversation_id"])
      .execute();

    await db.schema
      .createTable("background_agent_job_turns")
      .addColumn("id", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("job_id", "text", (column) =>
        column.notNull().references("background_agent_jobs.id"),
      )
      .addColumn("turn_index", "integer", (column) => column.notNull())
      .addColumn("attempt", "integer", (column) => column.notNull())
      .addColumn("revision", "integer", (column) => column.notNull())
      .addColumn("status", "text", (column) => column.notNull())
      .addColumn("item_count", "integer", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addColumn("updated_at", "text", (column) => column.notNull())
      .addUniqueConstraint("background_agent_job_turns_index", ["job_id", "turn_index"])
      .execute();

    await db.schema
      .createTable("background_agent_job_turn_items")
      .addColumn("turn_id", "text", (column) =>
        column.notNull().references("background_agent_job_turns.id"),
      )
      .addColumn("position", "integer", (column) => column.notNull())
      .addColumn("revision", "integer", (column) => column.notNull())
      .addColumn("item_key", "text", (column) => column.notNull())
      .addColumn("item", json, (column) => column.notNull())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("job_id", "text", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("background_agent_job_turn_items_primary", ["turn_id", "position"])
      .addUniqueConstraint("background_agent_job_turn_items_key", ["turn_id", "item_key"])
      .execute();

    await db.schema
      .createTable("background_agent_job_wake_events")
      .addColumn("id", "text", (column) => column.primaryKey())
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("conversation_id", "text", (column) => column.notNull())
      .addColumn("job_id", "text", (column) =>
        column.notNull().references("background_agent_jobs.id"),
      )
      .addColumn("payload", json, (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addColumn("claimed_at", "text")
      .addColumn("claimed_by", "text")
      .execute();
    await db.schema
      .createIndex("background_agent_job_wake_events_unclaimed")
      .on("background_agent_job_wake_events")
      .columns(["claimed_at", "created_at"])
      .execute();
  },
};
