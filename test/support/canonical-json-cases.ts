/**
 * The inputs of the canonical writer's golden byte vectors. Each case's expected bytes are the
 * checked-in file test/fixtures/canonical-json/<name>.json (reviewed byte by byte, never
 * regenerated blindly: a change there is a change of format 1's byte rules).
 */
import { objectFromEntries } from "./text-arbitraries.js";

export interface GoldenCase {
  readonly name: string;
  /** What the case pins down. */
  readonly about: string;
  readonly value: unknown;
}

const allControlCharacters = Array.from({ length: 0x20 }, (_, code) =>
  String.fromCharCode(code),
).join("");

export const goldenCases: readonly GoldenCase[] = [
  {
    name: "key-order-utf16",
    about:
      "keys sorted by UTF-16 code units: U+1F600 (surrogates D83D DE00) sorts before U+FF61; digits and capitals before lower case; the empty key first",
    value: { "\uff61": 1, "😀": 2, a: 3, B: 4, "": 5, aa: 6, "10": 7, "9": 8, "\u00e9": 9 },
  },
  {
    name: "lone-surrogates",
    about: "lone surrogates are written as lower-case \\u escapes; a surrogate pair as UTF-8",
    value: {
      high: "a\ud800b",
      low: "\udc00",
      pair: "😀",
      reversed: "\ude00\ud83d",
      highAtEnd: "x\udbff",
    },
  },
  {
    name: "unescaped-characters",
    about: "U+2028, U+2029, U+007F, U+0085 and / are written as themselves (UTF-8)",
    value: ["\u2028", "\u2029", "\u007f", "\u0085", "/", "</script>", "a\u2028b"],
  },
  {
    name: "numbers",
    about: "numbers as ECMAScript prints them: -0 as 0, 1e21 as 1e+21, shortest round trip",
    value: [
      -0,
      0,
      1e21,
      1e20,
      123456789012345680000,
      1e-7,
      0.000001,
      5e-324,
      Number.MAX_VALUE,
      Number.MAX_SAFE_INTEGER,
      0.1,
      0.0213,
      -1.5,
      100,
      2.5e-8,
    ],
  },
  {
    name: "empty-containers",
    about: "empty objects, arrays and Maps are {} and [] on the line of their key",
    value: { array: [], map: new Map(), nested: [{}, [], { inner: [] }], object: {} },
  },
  {
    name: "nested-arrays",
    about: "every non-empty container expanded, one member per line, two spaces per level",
    value: [[[]], [[1, [2, [3]]]], [[[[{}]]]], [[["deep"]]]],
  },
  {
    name: "control-characters",
    about:
      'U+0000–U+001F escaped (\\b \\t \\n \\f \\r short, the rest as lower-case \\u00xx), " and \\ escaped',
    value: { all: allControlCharacters, quoteAndBackslash: '"\\', mixed: "line 1\r\nline 2\ttab" },
  },
  {
    name: "non-ascii",
    about: "non-ASCII written as UTF-8, never as \\u escapes",
    value: { emoji: "😀👩‍💻", japanese: "会話を保存", latin: "héllo", ideographicStop: "\uff61" },
  },
  {
    name: "map-keys",
    about:
      "Maps are written as objects with sorted keys; __proto__ and constructor are keys like any other, in Maps and in plain objects",
    value: {
      map: new Map<string, unknown>([
        ["constructor", 2],
        ["__proto__", { state: "approved" }],
        ["toString", 3],
        ["b", 4],
        ["a", 5],
      ]),
      object: objectFromEntries([
        ["__proto__", 1],
        ["constructor", { kind: "data" }],
      ]),
    },
  },
  {
    name: "undefined-members",
    about: "object members and Map entries whose value is undefined are left out",
    value: {
      absent: undefined,
      kept: null,
      map: new Map<string, unknown>([
        ["gone", undefined],
        ["here", false],
      ]),
      onlyAbsent: { gone: undefined },
    },
  },
  {
    name: "top-level-string",
    about: "a document may be a scalar: one line and the final LF",
    value: "verbatim",
  },
  {
    name: "literals",
    about: "true, false and null",
    value: [true, false, null, { f: false, n: null, t: true }],
  },
];
