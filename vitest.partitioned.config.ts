import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * The suite's second PostgreSQL pass (`npm run test:partitioned`, part of `npm test`): every
 * test file that opens a PostgreSQL database, again, on PostgreSQL only, with every test
 * database's subject-owned tables hash-partitioned by subject into 4 (docs/scale.md,
 * "Partitions").
 */
const root = fileURLToPath(new URL(".", import.meta.url));
/** What a test file that opens a PostgreSQL database names (test/support/databases.ts). */
const OPENS_POSTGRES =
  /\b(describeEachDialect|testDialects|postgresUrl|freshDatabase|VERBATIM_PG_URL)\b/;

function testFiles(folder: string, found: string[] = []): string[] {
  for (const name of readdirSync(folder)) {
    if (name === "node_modules" || name === "dist") continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) testFiles(path, found);
    else if (name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

const files = ["packages", "test", "examples"]
  .flatMap((folder) => testFiles(join(root, folder)))
  .filter((path) => OPENS_POSTGRES.test(readFileSync(path, "utf8")))
  .map((path) => relative(root, path));

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: files,
    outputFile: { json: ".verbatim-test/results-partitioned.json" },
    env: { VERBATIM_TEST_PG_PARTITIONS: "4", VERBATIM_TEST_DIALECTS: "postgres" },
  },
});
