import type { Kysely } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";

/**
 * One schema change. `name` is its place in the order (`0001-…`, `0002-…`) and is recorded in
 * `verbatim_migrations` once applied; `up` runs inside a transaction and must use only the
 * schema builder and the capability flags, so one migration serves both dialects.
 */
export interface Migration {
  readonly name: string;
  /**
   * SQLite: the migration makes tables again (drops and renames tables others refer to), so the
   * runner turns foreign keys off around it and checks every one before the commit.
   */
  readonly rebuildsTables?: boolean;
  up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void>;
}
