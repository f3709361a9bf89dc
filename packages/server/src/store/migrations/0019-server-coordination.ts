import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * What several servers on one database coordinate through (docs/scale.md, "N servers on one
 * database"), each periodic statement through an index of its own:
 * - `ai_gateway_messages.lease_holder`: the server that answers an in_progress response (its id,
 *   new at each start). A server renews its leases with one statement by this id, through the
 *   partial index of in_progress rows by holder; null for every other message and for
 *   responses started before this migration.
 * - `ai_gateway_recorded_calls.kept_order` (PostgreSQL): the order in which the calls were kept,
 *   from one sequence of the database, so the calls of a subject kept by different servers are
 *   placed in that order whatever their clocks say (a call kept after another's answer was
 *   committed always has a larger number). Calls unplaced at the migration are numbered in
 *   their time order; placed ones keep null. SQLite (one host, one clock) leaves it null and
 *   orders by time.
 * - `ai_gateway_recorded_calls_unplaced`: a subject's calls not placed in a chain yet, in that
 *   order, read before each placing without reading other subjects' unplaced calls.
 */
export const serverCoordinationMigration: Migration = {
  name: "0019-server-coordination",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    await db.schema.alterTable("ai_gateway_messages").addColumn("lease_holder", "text").execute();
    await db.schema
      .createIndex("ai_gateway_messages_lease_holder")
      .on("ai_gateway_messages")
      .columns(["lease_holder"])
      .where(sql.ref("status"), "=", "in_progress")
      .execute();
    await db.schema
      .alterTable("ai_gateway_recorded_calls")
      .addColumn("kept_order", "bigint")
      .execute();
    if (capabilities.dialect === "postgres") {
      await sql`create sequence ai_gateway_recorded_calls_kept_order`.execute(db);
      // A default set after the column was added: no rewrite of the table's rows.
      await sql`alter table ai_gateway_recorded_calls
        alter column kept_order set default nextval('ai_gateway_recorded_calls_kept_order')`.execute(
        db,
      );
      await sql`update ai_gateway_recorded_calls as calls
        set kept_order = numbered.kept_order
        from (select id, nextval('ai_gateway_recorded_calls_kept_order') as kept_order
              from (select id from ai_gateway_recorded_calls
                    where conversation_id = '' order by created_at, id) as unplaced) as numbered
        where calls.id = numbered.id`.execute(db);
    }
    await db.schema
      .createIndex("ai_gateway_recorded_calls_unplaced")
      .on("ai_gateway_recorded_calls")
      .columns(["subject_uid", "kept_order", "created_at", "id"])
      .where(sql.ref("conversation_id"), "=", "")
      .execute();
  },
};
