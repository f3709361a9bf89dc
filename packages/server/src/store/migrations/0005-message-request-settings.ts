import type { Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/**
 * `ai_gateway_messages.request`: the settings of the request that produced a response message
 * (instructions, tools, largest output), so that reading a stored response gives them back
 * (docs/store.md). Null for every other message and for responses stored before.
 */
export const messageRequestSettingsMigration: Migration = {
  name: "0005-message-request-settings",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    await db.schema
      .alterTable("ai_gateway_messages")
      .addColumn("request", capabilities.jsonColumnType)
      .execute();
  },
};
