import { sql, type Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import type { Migration } from "./migration.js";

/** The channel `verbatim_api_keys` changes are announced on (PostgreSQL), the key's hash as payload. */
export const API_KEY_CHANGES_CHANNEL = "verbatim_api_key_changes";

/**
 * PostgreSQL: every update or deletion of a `verbatim_api_keys` row (a revocation, by
 * `verbatim keys revoke` or by hand in SQL) notifies `verbatim_api_key_changes` with the key's
 * hash when it commits, so servers that keep valid keys in memory forget it at once
 * (docs/server/README.md). SQLite has no notifications; its servers read the key every time.
 */
export const apiKeyNotificationsMigration: Migration = {
  name: "0004-api-key-notifications",
  async up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void> {
    if (capabilities.dialect !== "postgres") return;
    await sql`
      create function verbatim_api_key_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify(${sql.lit(API_KEY_CHANGES_CHANNEL)}, old.key_sha256);
        return null;
      end
      $$`.execute(db);
    await sql`
      create trigger verbatim_api_key_changed after update or delete on verbatim_api_keys
      for each row execute function verbatim_api_key_changed()`.execute(db);
  },
};
