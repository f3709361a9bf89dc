import type { Kysely } from "kysely";
import type { Migration } from "./migration.js";

/**
 * `ai_gateway_chain_nodes` point at gateway messages (docs/server/recorded-calls.md, "Matching"): a node is one
 * matching unit of a chain (a recorded call's wire message, or a Responses item), and
 * - `message_id` is the stored message that holds the unit;
 * - `anchor_message_id` is the deepest stored message the prefix ending at this node covers
 *   whole (what a request matching this prefix continues; null when none), and `anchor_count`
 *   the number of units that message's chain covers.
 * All three are null on nodes written before (recorded calls that wrote no messages).
 */
export const chainNodeMessagesMigration: Migration = {
  name: "0010-chain-node-messages",
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("ai_gateway_chain_nodes").addColumn("message_id", "text").execute();
    await db.schema
      .alterTable("ai_gateway_chain_nodes")
      .addColumn("anchor_message_id", "text")
      .execute();
    await db.schema
      .alterTable("ai_gateway_chain_nodes")
      .addColumn("anchor_count", "integer")
      .execute();
  },
};
