import { sql, type RawBuilder } from "kysely";

/**
 * The full-text indexes of the store, one entry per searched table: on SQLite (migration 0007,
 * the console's search) an FTS5 trigram index over one JSON column (`index`), kept in step by
 * triggers; on PostgreSQL (migrations 0017 and 0023) a `pg_trgm` GIN index (`trigramIndex`)
 * over the same column's text without spaces (`trigramText`).
 */
export const SEARCH_INDEXES = [
  {
    table: "ai_gateway_messages",
    column: "content",
    index: "ai_gateway_messages_search",
    trigramIndex: "ai_gateway_messages_search_trgm",
  },
  {
    table: "background_agent_job_turn_items",
    column: "item",
    index: "background_agent_job_turn_items_search",
    trigramIndex: "background_agent_job_turn_items_search_trgm",
  },
] as const;

/**
 * PostgreSQL: the most new entries, in kB, a trigram index keeps in its pending list before it
 * merges them into the index (migration 0024; PostgreSQL's default is 4 MB).
 */
export const SEARCH_PENDING_LIST_KB = 512;

/** FTS5's `hashsize` of those indexes (migration 0014): new index data kept in memory per transaction. */
export const SEARCH_INDEX_HASH_BYTES = 16 * 1024 * 1024;

/**
 * The text a trigram index holds: the JSON column's text without its spaces. `pg_trgm` takes
 * trigrams word by word; with the spaces out, a phrase's words run together and their trigrams
 * across the words are indexed too. A search names this same expression (PostgreSQL uses an
 * expression index only for the expression it was made with), beside the match on the text as
 * written: a text holding a phrase holds it without spaces, so the index misses no match.
 */
export function trigramText(column: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`replace(${column}::text, ' ', '')`;
}

/** `query` as `trigramText` holds it: without its spaces. */
export function trigramQuery(query: string): string {
  return query.replaceAll(" ", "");
}
