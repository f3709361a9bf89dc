/**
 * True when a database error is a unique or primary-key violation (PostgreSQL 23505, SQLite
 * SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE): the same row was written by someone else first.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("code" in error)) return false;
  const code = (error as { code: unknown }).code;
  return (
    code === "23505" ||
    code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    code === "SQLITE_CONSTRAINT_UNIQUE"
  );
}
