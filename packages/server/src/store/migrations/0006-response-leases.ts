import { sql, type Kysely } from "kysely";
import type { Migration } from "./migration.js";

/**
 * `ai_gateway_messages.lease_expires_at`: the lease of an in_progress response (docs/server/responses.md,
 * "Response lifecycle"). The server that answers a response writes it with the response and
 * renews it while the answer runs; a response whose lease has run out belongs to a server that
 * died, and any server ends it `incomplete`. Null for every other message. In_progress
 * responses left by servers that ran before this migration get a lease that has already run
 * out, so the first reconciliation ends them.
 */
export const responseLeasesMigration: Migration = {
  name: "0006-response-leases",
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable("ai_gateway_messages")
      .addColumn("lease_expires_at", "text")
      .execute();
    await db.schema
      .createIndex("ai_gateway_messages_lease")
      .on("ai_gateway_messages")
      .columns(["lease_expires_at"])
      .where(sql.ref("status"), "=", "in_progress")
      .execute();
    await sql`update ai_gateway_messages set lease_expires_at = ${new Date(0).toISOString()}
      where status = 'in_progress' and type = 'assistant'`.execute(db);
  },
};
