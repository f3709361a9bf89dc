import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  anyKey,
  anyNumber,
  anyText,
  objectFromEntries,
} from "../../../../test/support/text-arbitraries.js";
import { canonicalJsonText } from "./canonical-json.js";
import { VerbatimError } from "./errors.js";
import {
  decodeJsonBytes,
  formatJsonPath,
  parseStrictJson,
  safeParseStrictJson,
  safeParseStrictJsonInSlices,
  type JsonSyntaxProblem,
} from "./strict-json.js";

function problemOf(text: string): JsonSyntaxProblem {
  const result = safeParseStrictJson(text);
  if (result.ok) throw new Error(`parsed: ${text}`);
  return result.problem;
}

describe("strict JSON parser", () => {
  it("A6 refuses a key repeated in one object, with line, column and path", () => {
    const text = '{\n  "items" : [\n    { "id" : "a", "id" : "b" }\n  ]\n}';
    const problem = problemOf(text);
    expect(problem.message).toBe('the key "id" appears twice in one object');
    expect(problem.line).toBe(3);
    expect(problem.column).toBe(19);
    expect(problem.path).toBe("$.items[0]");
  });

  it("A6 accepts the same key in different objects", () => {
    expect(safeParseStrictJson('[{"id":1},{"id":2}]').ok).toBe(true);
  });

  it("A6 keeps __proto__ and constructor as data, never as object structure", () => {
    const value = parseStrictJson('{"__proto__": {"polluted": true}, "constructor": 1}');
    expect(typeof value).toBe("object");
    const object = value as Record<string, unknown>;
    expect(Object.getPrototypeOf(object)).toBe(null);
    expect(Object.keys(object)).toEqual(["__proto__", "constructor"]);
    expect(Object.hasOwn(object, "__proto__")).toBe(true);
    expect(object["__proto__"]).toEqual(objectFromEntries([["polluted", true]]));
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("A6 refuses __proto__ twice like any other repeated key", () => {
    expect(problemOf('{"__proto__": 1, "__proto__": 2}').message).toMatch(/appears twice/);
  });

  it("A14 refuses a byte order mark in bytes and in text", () => {
    const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
    const decoded = decodeJsonBytes(bytes);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.message).toMatch(/byte order mark/);
    expect(problemOf("\ufeff{}").message).toMatch(/expected a JSON value/);
  });

  it("A14 refuses bytes that are not UTF-8", () => {
    const decoded = decodeJsonBytes(Buffer.from([0x22, 0xff, 0x22]));
    expect(decoded).toEqual({ ok: false, message: "the file is not valid UTF-8" });
    expect(decodeJsonBytes(Buffer.from('"\u00e9"'))).toEqual({ ok: true, text: '"\u00e9"' });
  });

  const refused: [string, string, RegExp, string][] = [
    ["a trailing comma in an object", '{"a": 1,}', /expected a quoted key/, "$"],
    ["a trailing comma in an array", "[1, 2,]", /expected a JSON value/, "$[2]"],
    ["a raw control character in a string", '{"a": "x\ny"}', /U\+000a must be escaped/, "$.a"],
    ["a raw tab in a string", '["\t"]', /U\+0009 must be escaped/, "$[0]"],
    ["a bad escape", '{"a": "\\x41"}', /\\x is not a JSON escape/, "$.a"],
    ["a short \\u escape", '["\\u12"]', /four hex digits/, "$[0]"],
    ["an unclosed string", '{"a": "abc', /not closed/, "$.a"],
    ["a single-quoted string", "{'a': 1}", /expected a quoted key/, "$"],
    ["a comment", '{"a": 1 /* c */}', /expected "," or "}"/, "$"],
    ["NaN", "[NaN]", /expected a JSON value/, "$[0]"],
    ["Infinity", '{"n": Infinity}', /expected a JSON value/, "$.n"],
    ["a leading plus", "[+1]", /expected a JSON value/, "$[0]"],
    ["a leading zero", "[01]", /expected "," or "]"/, "$"],
    ["a bare dot", "[1.]", /expected "," or "]"/, "$"],
    ["hex", "[0x10]", /expected "," or "]"/, "$"],
    ["a number too large for a double", '{"n": 1e400}', /1e400 is too large/, "$.n"],
    ["a negative overflow", "[-2e308]", /too large/, "$[0]"],
    ["a missing colon", '{"a" 1}', /expected ":" after the key "a"/, "$"],
    ["two values", "{} {}", /after the JSON value/, "$"],
    ["empty input", "", /the end of the input/, "$"],
    ["a truncated document", '{"a": [1, 2', /expected "," or "]"/, "$.a"],
    ["an unquoted key", "{a: 1}", /expected a quoted key/, "$"],
    ["a misspelt literal", "[tru]", /expected a JSON value/, "$[0]"],
  ];
  for (const [what, text, message, path] of refused) {
    it(`A14 refuses ${what}`, () => {
      const problem = problemOf(text);
      expect(problem.message).toMatch(message);
      expect(problem.path).toBe(path);
    });
  }

  it("A14 refuses nesting deeper than 1000 levels without overflowing the stack", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(problemOf(deep).message).toMatch(/nesting deeper than 1000/);
    const objects = '{"a":'.repeat(1001) + "1" + "}".repeat(1001);
    expect(problemOf(objects).message).toMatch(/nesting deeper than 1000/);
    const allowed = "[".repeat(1000) + "]".repeat(1000);
    expect(safeParseStrictJson(allowed).ok).toBe(true);
  });

  it("A6 reads numbers exactly as JSON.parse does", () => {
    const texts = [
      "0",
      "-0",
      "1e21",
      "1E+2",
      "5e-324",
      "1e-400",
      "0.1",
      "-1.5e-7",
      "123456789012345678901",
    ];
    for (const text of texts) {
      const result = safeParseStrictJson(text);
      expect(result).toEqual({ ok: true, value: JSON.parse(text) });
    }
    expect(Object.is(parseStrictJson("-0"), -0)).toBe(true);
  });

  it("A6 reads escapes, lone surrogates and raw U+2028 in strings", () => {
    const text = '["\\ud800", "\\uD83D\\uDE00", "\\/\\b\\f\\n\\r\\t\\"\\\\", "\u2028", "\\u0000"]';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it("A6 gives the same value as JSON.parse for any JSON the canonical writer makes", () => {
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.constant(null),
        fc.boolean(),
        anyNumber,
        anyText(),
        tie("array"),
        tie("object"),
      ),
      array: fc.array(tie("value"), { maxLength: 4 }),
      object: fc
        .uniqueArray(fc.tuple(anyKey, tie("value")), { maxLength: 4, selector: ([key]) => key })
        .map(objectFromEntries),
    }));
    fc.assert(
      fc.property(value, (input) => {
        const canonical = canonicalJsonText(input);
        const compact = JSON.stringify(input);
        expect(parseStrictJson(canonical)).toEqual(JSON.parse(canonical));
        expect(parseStrictJson(compact)).toEqual(JSON.parse(compact));
      }),
      { numRuns: 300 },
    );
  });

  it("parseStrictJson throws invalid_json naming the source, line, column and path", () => {
    let error: unknown;
    try {
      parseStrictJson('{\n  "a" : [1,\n  2,,]\n}', "request body");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(VerbatimError);
    const verbatimError = error as VerbatimError;
    expect(verbatimError.code).toBe("invalid_json");
    expect(verbatimError.message).toMatch(/^request body is not valid JSON: expected a JSON value/);
    expect(verbatimError.where).toBe("line 3, column 5, $.a[2]");
  });

  it("formatJsonPath quotes keys that are not identifiers", () => {
    expect(formatJsonPath(["items", 0, "__proto__", "a b", "", "1x", 'q"'])).toBe(
      '$.items[0].__proto__["a b"][""]["1x"]["q\\""]',
    );
  });
});

describe("strict JSON parsing in slices (issue 31: one large body must not hold the thread)", () => {
  const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it("gives the one-pass result, value or problem, whatever the slice size", async () => {
    const texts = fc.oneof(
      fc.json(),
      // Cut and spliced JSON: problems at every kind of place, paths included.
      fc
        .tuple(fc.json(), fc.nat(), fc.constantFrom("", "}", "]", ",", ":", '"', "x", "[{"))
        .map(([text, at, junk]) => text.slice(0, at % (text.length + 1)) + junk),
    );
    await fc.assert(
      fc.asyncProperty(texts, fc.integer({ min: 1, max: 64 }), async (text, slice) => {
        expect(await safeParseStrictJsonInSlices(text, pause, slice)).toEqual(
          safeParseStrictJson(text),
        );
      }),
      { numRuns: 400 },
    );
  });

  it("pauses between slices of a large body, and the slices are short", async () => {
    const messages = Array.from({ length: 40_000 }, (_, index) => ({
      role: index % 2 === 0 ? "user" : "assistant",
      content: `message ${index}`,
    }));
    const text = JSON.stringify({ model: "m", messages });
    let pauses = 0;
    const result = await safeParseStrictJsonInSlices(
      text,
      () => {
        pauses++;
        return pause();
      },
      64 * 1024,
    );
    expect(result).toEqual({ ok: true, value: JSON.parse(text) });
    // About one pause per 64 Ki characters read.
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(text.length / (64 * 1024)) - 1);
    expect(pauses).toBeLessThanOrEqual(Math.ceil(text.length / (64 * 1024)) + 1);
  });

  it("refuses nesting deeper than the limit without a stack overflow, in slices too", async () => {
    const deep = "[".repeat(200_000) + "]".repeat(200_000);
    const oneShot = safeParseStrictJson(deep);
    expect(oneShot.ok).toBe(false);
    if (!oneShot.ok) expect(oneShot.problem.message).toBe("nesting deeper than 1000 levels");
    expect(await safeParseStrictJsonInSlices(deep, pause, 100)).toEqual(oneShot);
  });
});
