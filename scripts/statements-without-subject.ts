/**
 * Lists the statements of a statement log (tests run with VERBATIM_TEST_STATEMENT_LOG=<file>,
 * test/support/databases.ts) that touch a subject-owned table without naming the subject.
 *
 *   VERBATIM_TEST_STATEMENT_LOG=/tmp/statements.log npx vitest run test/server/…
 *   node bin/run-ts.js scripts/statements-without-subject.ts /tmp/statements.log
 */
import { readFileSync } from "node:fs";
import { statementsWithoutSubject } from "../packages/server/src/store/subject-keys.js";

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write("usage: statements-without-subject.ts <statement log>\n");
  process.exit(2);
}
const texts = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line !== "")
  .map((line) => JSON.parse(line) as string);
const missing = statementsWithoutSubject(new Set(texts));
for (const text of missing) process.stdout.write(`${text.replace(/\s+/g, " ")}\n\n`);
process.stderr.write(
  `${missing.length} of ${new Set(texts).size} statements do not name the subject\n`,
);
process.exit(missing.length === 0 ? 0 : 1);
