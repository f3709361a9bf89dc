/**
 * The one case table of format 1's decoders and validators (issue 32, "one implementation per
 * job"). packages/library/src/format/decoders.test.ts runs every case against every
 * implementation: the whole-file decoder (`decodeWholeFile`: the strict parser and the zod
 * schema, the definition), `decodeConversation` and the element-wise decoder fed in chunks of
 * several sizes (element-decode.ts, which hands every doubt to the whole-file decoder), and the
 * element-wise decoder alone, which must accept every readable case by itself and give up on
 * every other. `validatorCases` run against both validators, the zod schema and the
 * hand-written check (validate.ts).
 *
 * Each case says what decoding gives: readable (and whether the bytes are the canonical
 * encoding of what they decode to), or unreadable with the reason's kind, field problem and
 * JSON path. The corpus of format 1 (test/fixtures/format-1/manifest.json) is part of the
 * table, with the expectations its manifest gives.
 */
import { readFileSync } from "node:fs";
import type { FieldProblem, UnreadableReason } from "../../packages/library/src/format/decode.js";
import { emptyConversation } from "../../packages/library/src/format/empty.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";

export type DecoderExpectation =
  | {
      readonly ok: true;
      /** Whether the bytes are canonical; not checked when absent. */
      readonly canonical?: boolean;
    }
  | {
      readonly ok: false;
      readonly kind: UnreadableReason["kind"];
      readonly fieldProblem?: FieldProblem;
      readonly path?: string;
    };

export interface DecoderCase {
  readonly name: string;
  readonly bytes: Buffer;
  readonly expect: DecoderExpectation;
}

function conversationWithTexts(texts: readonly string[]): SavedConversation {
  return {
    ...emptyConversation(),
    model: "m",
    items: texts.map((text, index) => ({ id: `i${index}`, type: "user" as const, text })),
    history: texts.map((text) => ({ role: "user" as const, content: [{ type: "text", text }] })),
  };
}

/** A small canonical file: non-ASCII text, emoji, a quote, a backslash, a line break. */
export const sampleBytes = encodeConversation(
  conversationWithTexts(["héllo", "デザイン 🎨", 'quote " and \\ backslash', "line\nbreak"]),
);
const sample = sampleBytes.toString("utf8");

/** `sample` with `from` replaced by `to` (the replacement must change the text). */
function edited(from: string | RegExp, to: string): Buffer {
  const text = sample.replace(from, to);
  if (text === sample) throw new Error(`decoder-cases: ${String(from)} is not in the sample`);
  return Buffer.from(text, "utf8");
}

const readable = (canonical: boolean): DecoderExpectation => ({ ok: true, canonical });
const invalidJson = (path: string): DecoderExpectation => ({
  ok: false,
  kind: "invalidJson",
  path,
});
const invalidField = (fieldProblem: FieldProblem, path: string): DecoderExpectation => ({
  ok: false,
  kind: "invalidField",
  fieldProblem,
  path,
});
const notUtf8: DecoderExpectation = { ok: false, kind: "notUtf8" };

const sampleValue = JSON.parse(sample) as Record<string, unknown>;

/** Files laid out otherwise than the canonical writer lays them out, all readable. */
const layouts: DecoderCase[] = [
  { name: "the canonical sample", bytes: sampleBytes, expect: readable(true) },
  {
    name: "compact",
    bytes: Buffer.from(JSON.stringify(sampleValue)),
    expect: readable(false),
  },
  {
    name: "members in reverse order, tab indents",
    bytes: Buffer.from(
      JSON.stringify(Object.fromEntries(Object.entries(sampleValue).reverse()), null, "\t"),
    ),
    expect: readable(false),
  },
  { name: "CR LF line breaks", bytes: edited(/\n/g, "\r\n"), expect: readable(false) },
  { name: "two final line breaks", bytes: Buffer.from(`${sample}\n`), expect: readable(false) },
  { name: "no final line break", bytes: Buffer.from(sample.slice(0, -1)), expect: readable(false) },
  { name: "a tab for two spaces", bytes: edited("\n  ", "\n\t"), expect: readable(false) },
  { name: "no space before a colon", bytes: edited('" : ', '": '), expect: readable(false) },
  { name: "a space before a comma", bytes: edited(",\n", " ,\n"), expect: readable(false) },
  { name: "a blank line", bytes: edited(",\n", ",\n\n"), expect: readable(false) },
  {
    name: "one more space of indent",
    bytes: edited('\n    "', '\n     "'),
    expect: readable(false),
  },
];

/** The model's string written with other escapes: canonical only as JSON.stringify writes it. */
const modelSpellings: [string, boolean][] = [
  ['"A"', true],
  ['"a\\u001fb\\n\\"\\\\\\udc00\\ud800x😀/"', true],
  ['"\\u0041"', false],
  ['"\\/"', false],
  ['"\\u001F"', false],
  ['"\\u000a"', false],
  ['"\\ud83d\\ude00"', false],
  ['"\\uD800"', false],
];
const spellings: DecoderCase[] = modelSpellings.map(([spelling, canonical]) => ({
  name: `the model written ${spelling}`,
  bytes: edited('"model" : "m"', `"model" : ${spelling}`),
  expect: readable(canonical),
}));

/** Numbers: canonical only as ECMAScript prints them. */
const numbers: DecoderCase[] = [
  ...["1.0", "1e0", "10e-1"].map((number) => ({
    name: `formatVersion written ${number}`,
    bytes: edited('"formatVersion" : 1,', `"formatVersion" : ${number},`),
    expect: readable(false),
  })),
  {
    name: "a usage count written -0",
    bytes: edited('"input" : 0,', '"input" : -0,'),
    expect: readable(false),
  },
];

/** Escaped lone surrogates and a pair in the texts: read as the strict parser reads them. */
const surrogates: DecoderCase[] = ["\\ud800", "\\udfff", "\\ud83d", "\\ud83d\\ude00"].flatMap(
  (escape) =>
    ["héllo", "デザイン"].map((at) => ({
      name: `${escape} before ${at}`,
      bytes: edited(new RegExp(at, "g"), `${escape}${at}`),
      expect: readable(escape.length === 6),
    })),
);

/** What no decoder may accept, with the whole-file decoder's reason. */
const refusals: DecoderCase[] = [
  {
    name: "a repeated key inside an element",
    bytes: edited('"type" : "user"', '"type" : "user", "type" : "user"'),
    expect: invalidJson("$.items[0]"),
  },
  {
    name: "a repeated top-level key",
    bytes: edited('"model" : "m"', '"model" : "m",\n  "model" : "n"'),
    expect: invalidJson("$"),
  },
  {
    name: "an unknown top-level key",
    bytes: edited('"model" : "m"', '"model" : "m",\n  "extra" : 1'),
    expect: invalidField("unknownKey", "$.extra"),
  },
  {
    name: "__proto__ at the top",
    bytes: edited('"model" : "m"', '"model" : "m",\n  "__proto__" : {}'),
    expect: invalidField("unknownKey", "$.__proto__"),
  },
  {
    name: "__proto__ in an element",
    bytes: edited('"type" : "user"', '"type" : "user", "__proto__" : 1'),
    expect: invalidField("unknownKey", "$.items[0].__proto__"),
  },
  {
    name: "a bad escape",
    bytes: edited("héllo", "h\\xllo"),
    expect: invalidJson("$.history[0].content[0].text"),
  },
  {
    name: "a short \\u escape",
    bytes: edited("héllo", "h\\u12"),
    expect: invalidJson("$.history[0].content[0].text"),
  },
  {
    name: "a raw control character",
    bytes: edited("héllo", "h\u0001llo"),
    expect: invalidJson("$.history[0].content[0].text"),
  },
  {
    name: "a number too large",
    bytes: edited('"formatVersion" : 1', '"formatVersion" : 1e400'),
    expect: invalidJson("$.formatVersion"),
  },
  {
    name: "a newer version",
    bytes: edited('"formatVersion" : 1', '"formatVersion" : 2'),
    expect: { ok: false, kind: "newerVersion", path: "$.formatVersion" },
  },
  {
    name: "a wrong type in an element",
    bytes: edited('"type" : "user"', '"type" : 7'),
    expect: invalidField("unknownType", "$.items[0].type"),
  },
  {
    name: "a trailing comma in an array",
    bytes: edited(/\}\n {2}\],/, "},\n  ],"),
    expect: invalidJson("$.history[4]"),
  },
  {
    name: "a missing comma between elements",
    bytes: edited(/\},\n {4}\{/, "}\n    {"),
    expect: invalidJson("$.history"),
  },
  { name: "text after the document", bytes: Buffer.from(`${sample}x`), expect: invalidJson("$") },
  { name: "two documents", bytes: Buffer.from(`${sample}${sample}`), expect: invalidJson("$") },
  {
    name: "an array at the top",
    bytes: Buffer.from(`[${sample}]`),
    expect: { ok: false, kind: "notAnObject", path: "$" },
  },
  {
    name: "a byte order mark",
    bytes: Buffer.from(`\ufeff${sample}`),
    expect: { ok: false, kind: "invalidJson" },
  },
  {
    name: "mismatched brackets",
    bytes: edited(/\}\n {2}\],/, "]\n  ],"),
    expect: invalidJson("$.history[3]"),
  },
  { name: "a quote left open", bytes: edited('"m"', '"m'), expect: invalidJson("$.model") },
  { name: "empty", bytes: Buffer.alloc(0), expect: invalidJson("$") },
];

/**
 * Repeated keys where a scan could miss them (`:` and escaped quotes inside strings, escaped
 * backslashes before a quote, `__proto__`), a number JSON.parse makes Infinity, and nesting past
 * MAX_JSON_DEPTH, each as the model's value (which must be a string: a value without them is
 * read, and refused for its type).
 */
const checkedParse: DecoderCase[] = [
  ...[
    '{"a":1,"a":2}',
    '{"x":[{"k":"va:l\\":ue","k":"b"}]}',
    '{"__proto__":1,"__proto__":2}',
    '{"s":"\\u003a","s":1}',
    '{"a\\\\":":","a\\\\":2}',
  ].map((json) => ({
    name: `the model ${json}: a repeated key`,
    bytes: edited('"model" : "m"', `"model" : ${json}`),
    expect: invalidJson(json.startsWith('{"x"') ? "$.model.x[0]" : "$.model"),
  })),
  {
    name: 'the model {"n":1e400}',
    bytes: edited('"model" : "m"', '"model" : {"n":1e400}'),
    expect: invalidJson("$.model.n"),
  },
  {
    name: 'the model {"a:b":…}: no repeated key, read, and refused for its type',
    bytes: edited('"model" : "m"', '"model" : {"a:b":"c\\"d:e","\\\\":":\\\\","u":"\\u003a"}'),
    expect: invalidField("wrongType", "$.model"),
  },
];

/**
 * Nesting inside an element (an item at level 3 of the file): up to MAX_JSON_DEPTH levels in
 * all the undefined key is the fault; past it, the JSON.
 */
const deep = (levels: number): string => "[".repeat(levels) + "]".repeat(levels);
const nesting: DecoderCase[] = [990, 997, 998, 999, 1000, 5000].map((levels) => ({
  name: `${levels} nested arrays in an item`,
  bytes: edited('"type" : "user"', `"type" : "user", "deep" : ${deep(levels)}`),
  expect:
    levels <= 997
      ? invalidField("unknownKey", "$.items[0].deep")
      : invalidJson(`$.items[0].deep${"[0]".repeat(997)}`),
}));

/** Invalid UTF-8 inside a string (also split across chunks) and between elements. */
const textAt = sampleBytes.indexOf("héllo") + 1;
const badBytes: DecoderCase[] = [
  { name: "a UTF-8-encoded lone surrogate", bytes: [0xed, 0xa0, 0x80] },
  { name: "an overlong form", bytes: [0xc0, 0xaf] },
  { name: "a cut sequence", bytes: [0xe3, 0x83] },
].map(({ name, bytes }) => ({
  name: `${name} in a string`,
  bytes: Buffer.concat([
    sampleBytes.subarray(0, textAt),
    Buffer.from(bytes),
    sampleBytes.subarray(textAt),
  ]),
  expect: notUtf8,
}));
badBytes.push({
  name: "a no-break space between elements",
  bytes: edited("},\n    {", "},\n \u00a0   {"),
  expect: invalidJson("$.history[1]"),
});

interface Manifest {
  readonly files: Record<string, { readonly about: string; readonly expect: DecoderExpectation }>;
}
const corpusFolder = new URL("../fixtures/format-1/", import.meta.url);
const manifest = JSON.parse(
  readFileSync(new URL("manifest.json", corpusFolder), "utf8"),
) as Manifest;
const corpus: DecoderCase[] = Object.entries(manifest.files).map(([name, entry]) => ({
  name: `corpus ${name}: ${entry.about}`,
  bytes: readFileSync(new URL(name, corpusFolder)),
  expect: entry.expect,
}));
corpus.push({
  name: "the fixture package's conversation.json",
  bytes: readFileSync(
    new URL("../fixtures/packages/Poster.silverpoint/agent/conversation.json", import.meta.url),
  ),
  expect: { ok: true },
});

export const decoderCases: readonly DecoderCase[] = [
  ...layouts,
  ...spellings,
  ...numbers,
  ...surrogates,
  ...refusals,
  ...checkedParse,
  ...nesting,
  ...badBytes,
  ...corpus,
];

export interface ValidatorCase {
  readonly name: string;
  readonly value: unknown;
  readonly valid: boolean;
}

/**
 * Values for both validators: values that are not conversations, and the value JSON.parse gives
 * for every decoder case that is valid JSON without a repeated key (the decoder's verdict is then
 * the validators'). Id maps given as Maps are accepted (decoders.test.ts adds a decoded
 * conversation).
 */
export const validatorCases: readonly ValidatorCase[] = [
  ...[undefined, null, 1, "x", [], new Map(), {}].map((value) => ({
    name: `${String(value)} (${typeof value})`,
    value,
    valid: false,
  })),
  ...decoderCases.flatMap((entry) => {
    if (
      !entry.expect.ok &&
      (entry.expect.kind === "invalidJson" || entry.expect.kind === "notUtf8")
    ) {
      return [];
    }
    return [
      {
        name: entry.name,
        value: JSON.parse(entry.bytes.toString("utf8")) as unknown,
        valid: entry.expect.ok,
      },
    ];
  }),
];
