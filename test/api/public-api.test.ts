// Issue 16, "The public API": each entry point exports what a user needs and nothing else
// (listed in docs/api.md, which test/generated-documents.test.ts keeps from drifting), and
// one name has one meaning across all entry points.
import { describe, expect, it } from "vitest";
import { API_MEANINGS } from "../../scripts/api-meanings.js";
import { entryPoints, publicExports, type PublicExport } from "../../scripts/api-surface.js";

/** Internals that once were exported; reachable inside the repository by their own files only. */
const INTERNALS = [
  "appendChain",
  "AppendPlan",
  "AppendOutcome",
  "PreparedMessage",
  "exactlyOneOfKeys",
  "cachedBlock",
  "queryTemplate",
  "QueryTemplate",
  "selectRowArrays",
  "listenForChanges",
  "API_KEY_CHANGES_CHANNEL",
  "storeMigrations",
  "capabilitiesOf",
  "inTransaction",
  "canonicalJsonFragment",
  "CanonicalFragment",
  "formatJsonPath",
  "BASE64_PATTERN",
  "CLI_TRANSCRIPT_LIMIT",
  "toolDefinition",
  "runCliProcess",
  "INVALID_ARGUMENTS_KEY",
  "webSearchText",
  "SECOND_BREAKPOINT_THRESHOLD",
  "ROLE_OF_TYPE",
  "groupRowsByTurn",
  "TYPE_OF_ROLE",
];

const exports: readonly PublicExport[] = publicExports();

describe("the public API (issue 16)", () => {
  it("every entry point of package.json exports something", () => {
    for (const entryPoint of entryPoints().keys()) {
      expect(exports.filter((item) => item.entryPoint === entryPoint).length).toBeGreaterThan(0);
    }
  });

  it("one name, one meaning: no name is exported by two entry points", () => {
    const byName = new Map<string, string[]>();
    for (const item of exports) {
      byName.set(item.name, [...(byName.get(item.name) ?? []), item.entryPoint]);
    }
    const collisions = [...byName].filter(([, entries]) => entries.length > 1);
    expect(collisions).toEqual([]);
  });

  it("internals are not exported by any entry point", () => {
    const exported = new Set(exports.map((item) => item.name));
    expect(INTERNALS.filter((name) => exported.has(name))).toEqual([]);
    expect(exports.filter((item) => item.internal).map((item) => item.declaredAt)).toEqual([]);
  });

  it("every export has a one-line meaning, and every written meaning names an export", () => {
    expect(exports.filter((item) => item.meaning === undefined).map((item) => item.name)).toEqual(
      [],
    );
    const keys = new Set(exports.map((item) => `${item.entryPoint}#${item.name}`));
    expect(Object.keys(API_MEANINGS).filter((key) => !keys.has(key))).toEqual([]);
  });

  it("at run time each entry point exports exactly the values the compiler lists", async () => {
    for (const [entryPoint, file] of entryPoints()) {
      const loaded = (await import(/* @vite-ignore */ file)) as Record<string, unknown>;
      const values = exports
        .filter((item) => item.entryPoint === entryPoint)
        .filter((item) => item.kind !== "type" && item.kind !== "interface")
        .map((item) => item.name);
      expect(Object.keys(loaded).sort(), entryPoint).toEqual(values.sort());
    }
  });
});
