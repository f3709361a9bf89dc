/**
 * One nesting limit (issue 32): every walker of JSON text or values imports MAX_JSON_DEPTH
 * (core/json-depth.ts), and this test runs the one table of test/support/json-depth-cases.ts
 * against each. Readers (the strict parser behind the HTTP API's bodies and the format-1
 * decoder, the decoder's checked JSON.parse, the imports' depth check) accept MAX_JSON_DEPTH
 * levels and refuse one more; the canonical writer and the cache-prefix checker's tree count
 * their root from 0 with `>`, so they take one level more (behaviour kept as it was).
 */
import { describe, expect, it } from "vitest";
import { depthCases, type DepthCase } from "../support/json-depth-cases.js";
import { canonicalJsonText } from "../../packages/library/src/core/canonical-json.js";
import { MAX_JSON_DEPTH, nestsTooDeep } from "../../packages/library/src/core/json-depth.js";
import { safeParseStrictJson } from "../../packages/library/src/core/strict-json.js";
import { checkedJsonParse } from "../../packages/library/src/format/fast-decode.js";
import { NEED_MORE, newValueEnd, valueEnd } from "../../packages/library/src/format/json-bytes.js";
import { parseJsonTree } from "../../packages/library/src/providers/cache-prefix/json-tree.js";

function accepts(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch {
    return false;
  }
}

function checkedParse(text: string): boolean {
  const found = newValueEnd();
  valueEnd(Buffer.from(`${text}\n`), 0, found);
  return found.end !== NEED_MORE && checkedJsonParse(text, 0, found.members) !== undefined;
}

/** Each walker: the deepest nesting it accepts, and whether it accepts a case. */
const walkers: readonly (readonly [string, number, (entry: DepthCase) => boolean])[] = [
  [
    "the strict parser (safeParseStrictJson)",
    MAX_JSON_DEPTH,
    (entry) => safeParseStrictJson(entry.text).ok,
  ],
  [
    "the decoder's checked JSON.parse (checkedJsonParse)",
    MAX_JSON_DEPTH,
    (entry) => checkedParse(entry.text),
  ],
  [
    "the imports' check of parsed values (nestsTooDeep)",
    MAX_JSON_DEPTH,
    (entry) => !nestsTooDeep(entry.value),
  ],
  [
    "the canonical writer (canonicalJsonText)",
    MAX_JSON_DEPTH + 1,
    (entry) => accepts(() => canonicalJsonText(entry.value)),
  ],
  [
    "the cache-prefix checker's tree (parseJsonTree)",
    MAX_JSON_DEPTH + 1,
    (entry) => accepts(() => parseJsonTree(entry.text, "body")),
  ],
];

describe("one nesting limit, MAX_JSON_DEPTH, for every JSON walker", () => {
  for (const [name, deepest, walk] of walkers) {
    describe(name, () => {
      for (const entry of depthCases) {
        it(`${entry.name}: ${entry.levels <= deepest ? "accepted" : "refused"}`, () => {
          expect(walk(entry)).toBe(entry.levels <= deepest);
        });
      }
    });
  }

  it("the canonical writer names the depth it refuses", () => {
    const deep = depthCases.find((entry) => entry.levels === 5000);
    expect(() => canonicalJsonText(deep?.value)).toThrow(
      `nesting deeper than ${MAX_JSON_DEPTH} levels cannot be written as canonical JSON`,
    );
  });
});
