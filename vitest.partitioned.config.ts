import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * The suite's second PostgreSQL pass (`npm run test:partitioned`, part of `npm test`): the tests
 * that drive the store's statements most, again, on PostgreSQL only, with every test
 * database's subject-owned tables hash-partitioned by subject into 4 (docs/scale.md,
 * "Partitions"); the statement audits among them read every statement's plan. The whole suite
 * partitioned (about 10 minutes more than CI's budget holds):
 * `VERBATIM_TEST_PG_PARTITIONS=4 VERBATIM_TEST_DIALECTS=postgres npx vitest run`.
 */
const files = [
  "test/server/subject-keys.test.ts",
  "test/server/subject-statements-*.test.ts",
  "test/server/partitions.test.ts",
  "test/server/coordination-plans.test.ts",
  "test/console/lists-at-scale.test.ts",
  "test/console/search-subject.test.ts",
  "test/server/console-page.test.ts",
  "test/server/responses-chains.test.ts",
  "test/server/conversations-api.test.ts",
  "test/server/record-chains.test.ts",
  "test/server/record-across-servers.test.ts",
  "test/server/recorded-body-storage.test.ts",
  "test/server/recorded-body-packing.test.ts",
  "test/server/retention.test.ts",
  "test/server/jobs-routes.test.ts",
  "test/server/job-idempotency.test.ts",
  "test/server/cross-subject-oracle-on-trajectory-items.test.ts",
  "packages/server/src/gateway/conversations/chains.test.ts",
  "packages/server/src/gateway/responses/leases.test.ts",
  "packages/server/src/gateway/jobs/*.test.ts",
];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: files,
    outputFile: { json: ".verbatim-test/results-partitioned.json" },
    env: { VERBATIM_TEST_PG_PARTITIONS: "4", VERBATIM_TEST_DIALECTS: "postgres" },
  },
});
