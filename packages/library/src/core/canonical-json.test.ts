import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { goldenCases } from "../../../../test/support/canonical-json-cases.js";
import {
  anyKey,
  anyNumber,
  anyText,
  objectFromEntries,
} from "../../../../test/support/text-arbitraries.js";
import {
  CanonicalFragment,
  canonicalJsonBytes,
  canonicalJsonFragment,
  canonicalJsonText,
} from "./canonical-json.js";
import { isWellFormedText } from "./bytes.js";
import { VerbatimError } from "./errors.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../../../test/fixtures/canonical-json/${name}.json`, import.meta.url));

/** JSON values with Maps, `__proto__` keys, lone surrogates and every kind of number. */
const { value: anyValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    anyNumber,
    anyText(),
    tie("array"),
    tie("object"),
    tie("map"),
  ),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc
    .uniqueArray(fc.tuple(anyKey, tie("value")), { maxLength: 4, selector: ([key]) => key })
    .map(objectFromEntries),
  map: fc
    .uniqueArray(fc.tuple(anyKey, tie("value")), { maxLength: 4, selector: ([key]) => key })
    .map((entries) => new Map(entries)),
}));

/** What JSON.parse should give back: Maps become objects, -0 becomes 0. */
function asParsed(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(asParsed);
  if (value instanceof Map) {
    return objectFromEntries([...value].map(([key, item]) => [key, asParsed(item)]));
  }
  if (typeof value === "object" && value !== null) {
    return objectFromEntries(Object.entries(value).map(([key, item]) => [key, asParsed(item)]));
  }
  return value;
}

/** The same value with every object's and Map's keys inserted in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value instanceof Map) {
    return new Map([...value].reverse().map(([key, item]) => [key, reversedKeys(item)]));
  }
  if (typeof value === "object" && value !== null) {
    return objectFromEntries(
      Object.entries(value)
        .reverse()
        .map(([key, item]) => [key, reversedKeys(item)]),
    );
  }
  return value;
}

/** Checks from the text alone that the keys of every object are in ascending UTF-16 order. */
function keysAreSorted(text: string): boolean {
  const lastKey: (string | undefined)[] = [];
  for (const line of text.split("\n")) {
    const depth = (line.length - line.trimStart().length) / 2;
    const key = /^ *("(?:[^"\\]|\\.)*") : /.exec(line)?.[1];
    if (key !== undefined) {
      const parsed = JSON.parse(key) as string;
      const previous = lastKey[depth];
      if (previous !== undefined && !(previous < parsed)) return false;
      lastKey[depth] = parsed;
    }
    if (line.endsWith("{") || line.endsWith("[")) lastKey[depth + 1] = undefined;
  }
  return true;
}

function refusal(value: unknown): VerbatimError {
  try {
    canonicalJsonText(value);
  } catch (error) {
    if (error instanceof VerbatimError) return error;
    throw error;
  }
  throw new Error("the writer accepted the value");
}

describe("canonical JSON writer: golden byte vectors", () => {
  for (const golden of goldenCases) {
    it(`A2 ${golden.name}: ${golden.about}`, () => {
      expect(canonicalJsonBytes(golden.value).equals(fixture(golden.name))).toBe(true);
    });
  }

  it("A2 puts the emoji (UTF-16 D83D) before U+FF61, unlike code point order", () => {
    const text = fixture("key-order-utf16").toString("utf8");
    expect(text.indexOf('"😀"')).toBeLessThan(text.indexOf('"\uff61"'));
    expect(text).toContain('"\u00e9" : 9,\n  "😀" : 2,\n  "\uff61" : 1\n}');
  });

  it("A2 writes each golden file with LF only, exactly one final LF and two-space indents", () => {
    for (const golden of goldenCases) {
      const text = fixture(golden.name).toString("utf8");
      expect(text).not.toContain("\r");
      expect(text.endsWith("\n") && !text.endsWith("\n\n")).toBe(true);
      for (const line of text.split("\n")) {
        expect(line).not.toMatch(/\s$/);
        expect((line.length - line.trimStart().length) % 2).toBe(0);
      }
    }
  });

  it("A2 writes a lone surrogate as its escape and the rest as UTF-8 bytes", () => {
    const bytes = fixture("lone-surrogates");
    expect(bytes.includes(Buffer.from('"a\\ud800b"'))).toBe(true);
    expect(bytes.includes(Buffer.from([0xf0, 0x9f, 0x98, 0x80]))).toBe(true);
    expect(bytes.includes(Buffer.from([0xe2, 0x80, 0xa8]))).toBe(false);
    expect(fixture("unescaped-characters").includes(Buffer.from([0xe2, 0x80, 0xa8]))).toBe(true);
  });
});

describe("canonical JSON writer: refusals name the JSON path", () => {
  const cases: [string, unknown, string, RegExp][] = [
    ["NaN", { a: [1, Number.NaN] }, "$.a[1]", /NaN/],
    ["Infinity", { usage: { input: Number.POSITIVE_INFINITY } }, "$.usage.input", /Infinity/],
    ["-Infinity", [Number.NEGATIVE_INFINITY], "$[0]", /-Infinity/],
    ["undefined in an array", { list: [null, undefined] }, "$.list[1]", /undefined/],
    ["a hole in an array", { list: [1, , 3] }, "$.list[1]", /undefined/],
    ["a function", { "odd key": () => 1 }, '$["odd key"]', /function/],
    ["a bigint", new Map([["n", 1n]]), "$.n", /bigint/],
    ["a symbol", [Symbol("s")], "$[0]", /symbol/],
    ["a Date", { at: new Date(0) }, "$.at", /instance of Date/],
    ["a Map key that is not a string", { m: new Map([[1, 2]]) }, "$.m", /Map key/],
  ];
  for (const [what, value, where, message] of cases) {
    it(`A2 refuses ${what} at ${where}`, () => {
      const error = refusal(value);
      expect(error.code).toBe("non_canonical_value");
      expect(error.where).toBe(where);
      expect(error.message).toMatch(message);
    });
  }

  it("A2 refuses a cycle and names where it closes", () => {
    const inner: Record<string, unknown> = { name: "inner" };
    const outer = { a: { b: inner } };
    inner["back"] = outer.a;
    const error = refusal(outer);
    expect(error.code).toBe("non_canonical_value");
    expect(error.where).toBe("$.a.b.back");
    expect(error.message).toContain("a cycle (this value is also at $.a)");
  });

  it("A2 refuses an array that contains itself", () => {
    const list: unknown[] = [1];
    list.push(list);
    expect(refusal({ list }).where).toBe("$.list[1]");
  });

  it("A2 refuses a fragment spliced at another depth", () => {
    const fragment = new CanonicalFragment(canonicalJsonFragment({ a: 1 }, 2), 2);
    expect(refusal({ here: fragment }).message).toMatch(/another depth/);
  });
});

describe("canonical JSON writer: fragments", () => {
  it("A2 a fragment written at its depth splices to the same bytes as the value", () => {
    const message = { role: "user", content: [{ type: "text", text: "hi\u2028" }] };
    const direct = canonicalJsonText({ history: [message, message] });
    const fragment = new CanonicalFragment(canonicalJsonFragment(message, 2), 2);
    expect(canonicalJsonText({ history: [fragment, fragment] })).toBe(direct);
  });
});

describe("canonical JSON writer: bytes in chunks", () => {
  it("A2 canonicalJsonBytes is the UTF-8 of canonicalJsonText, also for documents written in many chunks", () => {
    const value = {
      history: Array.from({ length: 6000 }, (_, index) => ({
        role: index % 3 === 0 ? "user" : "assistant",
        text: index % 7 === 0 ? `会話 ${index} 😀 \ud800` : `plain ${index}`,
        list: [index, [index / 3]],
      })),
    };
    const text = canonicalJsonText(value);
    expect(canonicalJsonBytes(value).equals(Buffer.from(text, "utf8"))).toBe(true);
    expect(text.length).toBeGreaterThan(500_000);
  });

  it("A2 a getter that writes canonical text while bytes are being written does not mix them", () => {
    const big = Array.from({ length: 3000 }, (_, index) => `item ${index}`);
    const inner: string[] = [];
    const value = {
      get nested() {
        inner.push(canonicalJsonText(big));
        return "nested";
      },
      list: big,
    };
    const bytes = canonicalJsonBytes(value);
    expect(bytes.toString("utf8")).toBe(canonicalJsonText({ list: big, nested: "nested" }));
    expect(inner[0]).toBe(canonicalJsonText(big));
  });

  it("A2 a fragment spliced at the right depth before a refused value does not hide the path", () => {
    const fragment = new CanonicalFragment(canonicalJsonFragment({ a: 1 }, 2), 2);
    expect(refusal({ history: [fragment, Number.NaN] }).where).toBe("$.history[1]");
  });
});

describe("canonical JSON writer: properties", () => {
  it("A2 the same value always gives the same bytes, whatever the insertion order of keys", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        const first = canonicalJsonBytes(value);
        expect(canonicalJsonBytes(value).equals(first)).toBe(true);
        expect(canonicalJsonBytes(reversedKeys(value)).equals(first)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("A2 the output is JSON that parses back to an equal value", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        const bytes = canonicalJsonBytes(value);
        const text = bytes.toString("utf8");
        expect(Buffer.from(text, "utf8").equals(bytes)).toBe(true);
        expect(isWellFormedText(text)).toBe(true);
        expect(JSON.parse(text)).toEqual(asParsed(value));
      }),
      { numRuns: 300 },
    );
  });

  it("A2 keys are sorted by UTF-16 code units at every level and the layout is fixed", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        const text = canonicalJsonText(value);
        expect(keysAreSorted(text)).toBe(true);
        expect(text.endsWith("\n") && !text.endsWith("\n\n")).toBe(true);
        expect(text).not.toContain("\r");
        expect(text).not.toMatch(/[ \t]\n/);
        const pretty = JSON.stringify(JSON.parse(text), null, 2);
        expect(text.split("\n").length).toBe(pretty.split("\n").length + 1);
      }),
      { numRuns: 300 },
    );
  });

  it("A2 keysAreSorted sees a wrong order (the check can fail)", () => {
    expect(keysAreSorted('{\n  "b" : 1,\n  "a" : 2\n}\n')).toBe(false);
    expect(keysAreSorted('{\n  "\uff61" : 1,\n  "😀" : 2\n}\n')).toBe(false);
  });
});
