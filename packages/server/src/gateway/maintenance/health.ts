import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/database.js";
import { pingDatabase } from "../../store/repositories/health.js";

/** What GET /healthz answers while the database answers. */
export interface Health {
  readonly status: "ok";
  readonly database: "sqlite" | "postgres";
}

/**
 * The server's health: ok, with the database's dialect, while the (migrated) database answers;
 * `store_unreachable` when it does not.
 */
export async function checkHealth(database: StoreDatabase): Promise<Health> {
  try {
    await pingDatabase(database.db);
  } catch (error) {
    throw new VerbatimError("store_unreachable", "the database does not answer", {
      cause: error,
      hint: "Check the database the server was started on",
    });
  }
  return { status: "ok", database: database.capabilities.dialect };
}
