/**
 * The SQL texts PostgreSQL runs as named prepared statements: the query templates' (the
 * statements every request runs). A named statement is parsed and planned once per connection,
 * then only bound and run: an unnamed one is parsed and planned again at every run, which costs
 * more than running the small statements of a request (bench/store/prepared-statements.ts).
 *
 * Names are per process and per SQL text; pg prepares a name on a connection the first time
 * that connection runs it. A pooler that moves a session's statements between server
 * connections (PgBouncer in transaction mode before 1.21) cannot keep them: open the database
 * with `preparedStatements: false` there (`VERBATIM_PG_PREPARED_STATEMENTS=off`).
 */
const names = new Map<string, string>();

/** Templates are few and fixed; past this many texts, the rest run unnamed. */
const MAX_NAMED = 256;

/**
 * A statement that answers with `*` columns stops working once prepared when a migration adds
 * a column to its table (PostgreSQL: "cached plan must not change result type"): it stays
 * unnamed. Templates list their columns.
 */
const STAR_COLUMNS = /(?:\bselect|\breturning)\s+\*|\.\*/i;

/** Runs `text` as a named prepared statement from now on (on databases that allow it). */
export function nameStatement(text: string): void {
  if (names.has(text) || names.size >= MAX_NAMED || STAR_COLUMNS.test(text)) return;
  names.set(text, `verbatim_${names.size + 1}`);
}

/** The prepared statement's name of `text`, if it has one. */
export function statementName(text: string): string | undefined {
  return names.get(text);
}
