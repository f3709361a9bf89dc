/**
 * The full-text indexes of the SQLite store (migration 0007, the console's search): each an
 * FTS5 trigram index over one JSON column, kept in step by triggers.
 */
export const SEARCH_INDEXES = [
  { table: "ai_gateway_messages", column: "content", index: "ai_gateway_messages_search" },
  {
    table: "background_agent_job_turn_items",
    column: "item",
    index: "background_agent_job_turn_items_search",
  },
] as const;

/** FTS5's `hashsize` of those indexes (migration 0014): new index data kept in memory per transaction. */
export const SEARCH_INDEX_HASH_BYTES = 16 * 1024 * 1024;
