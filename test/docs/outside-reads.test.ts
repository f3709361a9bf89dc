import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { outsideReads } from "./outside-reads.js";
import { filesUnder } from "./test-titles.js";

const root = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");

/** The test files anywhere in the repository and everything under test/ (support, fixtures code). */
function testSources(): string[] {
  const tests = filesUnder(root, (name) => name.endsWith(".test.ts"));
  const support = filesUnder(join(root, "test"), (name) => /\.(ts|mts|js|mjs)$/.test(name)).map(
    (path) => `test/${path}`,
  );
  return [...new Set([...tests, ...support])].sort();
}

describe("tests read files inside the repository only", () => {
  it("no test reads a file outside the repository (the seed example test read ../shared/seeds)", () => {
    const found = testSources().flatMap((file) =>
      outsideReads(root, file, readFileSync(join(root, file), "utf8")),
    );
    expect(found).toEqual([]);
  });

  it("finds the seed example test's old read of ../shared/seeds, by URL and by name", () => {
    const old = [
      "const fixtures = new URL('../../test/fixtures/format-1/', import.meta.url);",
      'const seedFile = new URL("../../../shared/seeds/000_7b05b146ee153505.txt", import.meta.url);',
    ].join("\n");
    const found = outsideReads(root, "src/format/seed-example.test.ts", old);
    expect(found.map((read) => [read.line, read.reason.split(" ")[0]])).toEqual([
      [2, "resolves"],
      [2, "names"],
    ]);
  });

  it("finds a URL that climbs out of the repository without naming the specification", () => {
    const found = outsideReads(
      root,
      "test/a.test.ts",
      'new URL("../../../elsewhere.txt", import.meta.url)',
    );
    expect(found).toHaveLength(1);
    expect(found[0]?.reason).toMatch(/outside the repository$/);
  });

  it("lets a test name the copies under test/fixtures/seeds", () => {
    const source = 'new URL("../../test/fixtures/seeds/000-format-1-example.txt", import.meta.url)';
    expect(outsideReads(root, "src/format/seed-example.test.ts", source)).toEqual([]);
  });
});
