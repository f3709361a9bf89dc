import { CompiledQuery, type Compilable, type Kysely } from "kysely";
import { ARRAY_ROWS_MARKER } from "./database.js";
import type { StoreSchema } from "./schema.js";

/**
 * Runs a select and returns each row as an array of its values, in the order of the select
 * list, on both dialects. For reads of thousands of rows, where building one object per row
 * costs more than the query; the query itself is written once with Kysely as everywhere else.
 */
export async function selectRowArrays(
  db: Kysely<StoreSchema>,
  query: Compilable,
): Promise<readonly (readonly unknown[])[]> {
  const compiled = query.compile();
  const result = await db.executeQuery(
    CompiledQuery.raw(ARRAY_ROWS_MARKER + compiled.sql, [...compiled.parameters]),
  );
  return result.rows as unknown as readonly (readonly unknown[])[];
}
