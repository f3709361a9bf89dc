import { availableParallelism } from "node:os";
import { defaultClientConditions, defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Tests run on the TypeScript sources: the "verbatim-source" export condition of both packages
// points at their src/ (the published packages resolve to dist/).
export default defineConfig({
  resolve: { conditions: ["verbatim-source", ...defaultClientConditions] },
  ssr: { resolve: { conditions: ["verbatim-source", ...defaultServerConditions] } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two files at once even on two cores (Vitest's default there is one): much of a test's time
    // is spent waiting on PostgreSQL, child processes and sockets, not on its own thread.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ["default", "json"],
    outputFile: { json: ".verbatim-test/results.json" },
  },
});
