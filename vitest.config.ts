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
    reporters: ["default", "json"],
    outputFile: { json: ".verbatim-test/results.json" },
  },
});
