/**
 * The subject is the store's tenant: every table a subject owns has `subject_uid` first in its
 * primary key, its unique constraints and its foreign keys (migration 0021), and every statement
 * on those tables names the subject, so PostgreSQL's hash partitions and Citus can route each
 * statement to the one partition or node that holds the subject (docs/scale.md, "Keys").
 *
 * The few statements that must look across subjects (an operator's list of every subject, finding
 * the owner of an id the console was given, the maintenance scans that find expired leases or
 * old rows) end with `ACROSS_SUBJECTS` and say why beside it; `statementsWithoutSubject` finds
 * the others.
 */

/** The tables a subject owns, each holding `subject_uid`. */
export const SUBJECT_OWNED_TABLES = [
  "ai_gateway_conversations",
  "ai_gateway_branches",
  "ai_gateway_messages",
  "ai_gateway_chain_nodes",
  "ai_gateway_history_backfills",
  "ai_gateway_recorded_calls",
  "ai_gateway_body_pieces",
  "ai_gateway_body_packs",
  "ai_gateway_body_chunks",
  "ai_gateway_images",
  "ai_gateway_caller_deletions",
  "ai_gateway_idempotency_keys",
  "background_agent_jobs",
  "background_agent_job_turns",
  "background_agent_job_turn_items",
  "background_agent_job_wake_events",
] as const;

export type SubjectOwnedTable = (typeof SUBJECT_OWNED_TABLES)[number];

/** Ends a statement that looks across subjects on purpose (say why in a comment beside it). */
export const ACROSS_SUBJECTS = "/* verbatim: across subjects */";

const OWNED = new Set<string>(SUBJECT_OWNED_TABLES);
const REFERENCE = /\b(?:from|join|update|into)\s+"?([a-z_]+)"?/gi;
const SUBJECT = /\bsubject_uid\b/gi;
const SCHEMA_CHANGE = /^\s*(?:create|alter|drop|pragma|comment|vacuum|analyze|reindex)\b/i;

/** How many times a statement names a subject-owned table in FROM, JOIN, UPDATE or INTO. */
export function ownedTableReferences(text: string): number {
  let references = 0;
  for (const match of text.matchAll(REFERENCE)) {
    if (OWNED.has((match[1] ?? "").toLowerCase())) references += 1;
  }
  return references;
}

/**
 * The statements among `texts` that refer to a subject-owned table more often than they name
 * `subject_uid` (each reference in FROM, JOIN, UPDATE or INTO needs its own subject condition,
 * join condition or inserted column), skipping schema changes and statements marked
 * `ACROSS_SUBJECTS`.
 */
export function statementsWithoutSubject(texts: Iterable<string>): string[] {
  const found: string[] = [];
  for (const text of texts) {
    if (SCHEMA_CHANGE.test(text) || text.includes(ACROSS_SUBJECTS)) continue;
    const references = ownedTableReferences(text);
    if (references === 0) continue;
    const named = text.match(SUBJECT)?.length ?? 0;
    if (named < references) found.push(text);
  }
  return found;
}
