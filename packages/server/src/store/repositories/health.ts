import { sql, type Kysely } from "kysely";
import type { StoreSchema } from "../schema.js";

/** Runs `select 1`: resolves while the database answers, rejects when it does not. */
export async function pingDatabase(db: Kysely<StoreSchema>): Promise<void> {
  await sql`select 1`.execute(db);
}
