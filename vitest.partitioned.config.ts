import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * The suite's second PostgreSQL pass (`npm run test:partitioned`, part of `npm test`): the
 * statement audits (which drive every area of the store and read every statement's plan), the
 * keys, partitions, plans, lists and search (phrases too), and packing, again, on PostgreSQL only, with every
 * test database's subject-owned tables hash-partitioned by subject into 4 (docs/scale.md,
 * "Partitions"). The whole suite partitioned (about 10 minutes more than CI's budget holds):
 * `VERBATIM_TEST_PG_PARTITIONS=4 VERBATIM_TEST_DIALECTS=postgres npx vitest run`.
 */
const files = [
  "test/server/subject-keys.test.ts",
  "test/server/subject-statements-*.test.ts",
  "test/server/partitions.test.ts",
  "test/server/coordination-plans.test.ts",
  "test/console/lists-at-scale.test.ts",
  "test/console/search-subject.test.ts",
  "test/console/phrase-search.test.ts",
  "test/server/recorded-body-packing.test.ts",
];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: files,
    // One file at a time: the packing tests check what a vacuum gives back, which any other
    // file's open transaction holds back (a vacuum keeps what a running snapshot may see).
    fileParallelism: false,
    outputFile: { json: ".verbatim-test/results-partitioned.json" },
    env: { VERBATIM_TEST_PG_PARTITIONS: "4", VERBATIM_TEST_DIALECTS: "postgres" },
  },
});
