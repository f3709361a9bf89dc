/**
 * Audits which statements name the subject (store/subject-keys.ts): `auditedDatabase(dialect)`
 * opens a fresh migrated database that keeps the text (and on PostgreSQL the parameters) of
 * every statement run after migrating; on PostgreSQL its subject-owned tables are
 * hash-partitioned by subject (4 partitions). `expectEveryStatementNamesTheSubject(audit)`
 * fails with the statements that touch a subject-owned table without naming the subject, and
 * on PostgreSQL reads the plan (`EXPLAIN`, with the parameters the statement ran with) of every
 * other one and fails with those whose plan reads more than one partition of a table (issue 34
 * items 1 and 2).
 *
 *   const audit = await auditedDatabase("postgres");
 *   … drive the server or the store with audit.database …
 *   await expectEveryStatementNamesTheSubject(audit);
 *   await audit.cleanup();
 */
import { CompiledQuery } from "kysely";
import { expect } from "vitest";
import { partitionBySubject } from "../../packages/server/src/store/partitions.js";
import {
  ACROSS_SUBJECTS,
  ownedTableReferences,
  SUBJECT_OWNED_TABLES,
  statementsWithoutSubject,
} from "../../packages/server/src/store/subject-keys.js";
import {
  freshDatabase,
  testPartitions,
  type FreshDatabase,
  type TestDialect,
} from "./databases.js";

/** Partitions of the audited PostgreSQL databases. */
export const AUDIT_PARTITIONS = 4;

export interface AuditedDatabase extends FreshDatabase {
  /** Every distinct statement run since the database was migrated. */
  readonly statements: ReadonlySet<string>;
  /** The parameters each statement first ran with (PostgreSQL). */
  readonly parameters: ReadonlyMap<string, readonly unknown[]>;
  /** Stops keeping statements (the audit's own reads are not audited). */
  stop(): void;
}

export async function auditedDatabase(dialect: TestDialect): Promise<AuditedDatabase> {
  const statements = new Set<string>();
  const parameters = new Map<string, readonly unknown[]>();
  let recording = false;
  const fresh = await freshDatabase(dialect, {
    onStatement: (text, values) => {
      if (!recording) return;
      statements.add(text);
      if (values !== undefined && !parameters.has(text)) parameters.set(text, values);
    },
  });
  if (dialect === "postgres") {
    await partitionBySubject(fresh.database, testPartitions ?? AUDIT_PARTITIONS);
  }
  recording = true;
  return {
    ...fresh,
    statements,
    parameters,
    stop: () => {
      recording = false;
    },
  };
}

/**
 * Fails listing each statement on a subject-owned table that does not name the subject, and on
 * PostgreSQL each other one whose plan reads more than one partition of a table.
 */
export async function expectEveryStatementNamesTheSubject(audit: AuditedDatabase): Promise<void> {
  audit.stop();
  const missing = statementsWithoutSubject(audit.statements).map((text) =>
    text.replace(/\s+/g, " "),
  );
  expect(missing, "statements that do not name the subject").toEqual([]);
  if (audit.database.capabilities.dialect !== "postgres") return;
  expect(
    await statementsReadingSeveralPartitions(audit),
    "statements whose plan reads more than one partition of a table",
  ).toEqual([]);
}

/**
 * PostgreSQL: each audited statement (not marked across subjects) whose plan reads more than
 * one partition of a subject-owned table, as `<table> × <partitions>: <statement>`.
 */
export async function statementsReadingSeveralPartitions(
  audit: AuditedDatabase,
): Promise<string[]> {
  audit.stop();
  const spread: string[] = [];
  for (const text of audit.statements) {
    if (!touchesOwnedTable(text) || text.includes(ACROSS_SUBJECTS)) continue;
    const partitions = await partitionsRead(audit, text);
    for (const [table, names] of partitions) {
      if (names.size > 1) spread.push(`${table} × ${names.size}: ${text.replace(/\s+/g, " ")}`);
    }
  }
  return spread;
}

const OWNED = new Set<string>(SUBJECT_OWNED_TABLES);
const DML = /^\s*(?:\/\*[^*]*\*\/\s*)*(?:select|insert|update|delete|with)\b/i;

function touchesOwnedTable(text: string): boolean {
  return DML.test(text) && !text.includes(";") && ownedTableReferences(text) > 0;
}

/** The partitions each subject-owned table's scans in the statement's plan read. */
async function partitionsRead(
  audit: AuditedDatabase,
  text: string,
): Promise<Map<string, Set<string>>> {
  const result = await audit.database.db.executeQuery<{ "QUERY PLAN": unknown }>(
    CompiledQuery.raw(`explain (format json) ${text}`, [...(audit.parameters.get(text) ?? [])]),
  );
  const read = new Map<string, Set<string>>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (node === null || typeof node !== "object") return;
    const relation = (node as Record<string, unknown>)["Relation Name"];
    if (typeof relation === "string") {
      const parent = relation.replace(/_p\d+$/, "");
      if (parent !== relation && OWNED.has(parent)) {
        const names = read.get(parent) ?? new Set<string>();
        names.add(relation);
        read.set(parent, names);
      }
    }
    Object.values(node).forEach(visit);
  };
  // The store reads JSON columns as their text.
  const plan = result.rows[0]?.["QUERY PLAN"];
  visit(typeof plan === "string" ? (JSON.parse(plan) as unknown) : plan);
  return read;
}

/** Fails unless some audited statement contains `fragment` (the workload reached that code). */
export function expectStatementRan(audit: AuditedDatabase, fragment: string): void {
  const ran = [...audit.statements].some((text) => text.includes(fragment));
  expect(ran, `a statement containing ${JSON.stringify(fragment)} ran`).toBe(true);
}
