/**
 * A fast-check arbitrary of format 1 conversations: all 13 item types with and without their
 * optional fields, every block (base64 variants included), id maps keyed by `__proto__` and
 * `constructor`, strings with emoji and lone surrogates, empty containers, huge and tiny numbers.
 */
import fc from "fast-check";
import { base64Encode } from "../../packages/library/src/core/bytes.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import type { Item } from "../../packages/library/src/format/items.js";
import type { Block, Message } from "../../packages/library/src/history/message.js";
import { anyCount, anyKey, anyNonNegative, anyText } from "./text-arbitraries.js";

const text = anyText();
const id = fc.oneof(
  { weight: 3, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "toString", "😀", "\ud800") },
  { weight: 1, arbitrary: anyText({ minLength: 1 }) },
);
const sha256 = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((bytes) => Buffer.from(bytes).toString("hex"));
const mimeType = fc.constantFrom("image/png", "image/jpeg", "image/webp", "image/svg+xml");
const base64 = fc.uint8Array({ maxLength: 24 }).map(base64Encode);

function withOptional<T extends Record<string, fc.Arbitrary<unknown>>>(
  required: readonly (keyof T & string)[],
  fields: T,
) {
  return fc.record(fields, { requiredKeys: required as never[] }) as unknown as fc.Arbitrary<{
    [K in keyof T]: T[K] extends fc.Arbitrary<infer V> ? V : never;
  }>;
}

export const anyBlock: fc.Arbitrary<Block> = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text }),
  fc.record({ type: fc.constant("image" as const), sha256, mimeType }),
  fc.record({ type: fc.constant("imageOmitted" as const), mimeType }),
  fc.record({ type: fc.constant("toolCall" as const), id: text, name: text, arguments: text }),
  fc.record({
    type: fc.constant("toolCall" as const),
    id: text,
    name: text,
    argumentsBase64: base64,
  }),
  fc.record({
    type: fc.constant("toolResult" as const),
    callID: text,
    toolName: text,
    isError: fc.boolean(),
    content: text,
  }),
  fc.record({
    type: fc.constant("toolResult" as const),
    callID: text,
    toolName: text,
    isError: fc.boolean(),
    contentBase64: base64,
  }),
);

export const anyMessage: fc.Arbitrary<Message> = fc.record({
  role: fc.constantFrom("user" as const, "assistant" as const, "tool" as const),
  content: fc.array(anyBlock, { maxLength: 4 }),
});

const citation = withOptional(["url"], { url: text, title: text, citedText: text });
const common = { id, detail: text, citations: fc.array(citation, { maxLength: 2 }) };
const optionalCommon = ["detail", "citations"] as const;

function item<T extends Record<string, fc.Arbitrary<unknown>>>(
  type: Item["type"],
  fields: T,
  optional: readonly string[] = [],
) {
  const all = { ...common, type: fc.constant(type), ...fields };
  const required = Object.keys(all).filter(
    (key) => !optional.includes(key) && !(optionalCommon as readonly string[]).includes(key),
  );
  return withOptional(required, all) as unknown as fc.Arbitrary<Item>;
}

export const anyItem: fc.Arbitrary<Item> = fc.oneof(
  item("user", { text, hasImage: fc.boolean() }, ["hasImage"]),
  item("assistant", { text }),
  item("thinking", { text }),
  item(
    "tool",
    {
      name: text,
      status: fc.constantFrom("running", "succeeded", "failed", "cancelled", "denied"),
      callID: text,
      statusText: text,
      summary: text,
    },
    ["callID", "statusText", "summary"],
  ),
  item("notice", { kind: text, text, action: text }, ["action"]),
  item("failure", { message: text }),
  item("questions", {
    questions: fc.array(
      withOptional(["text"], { text, options: fc.array(text, { maxLength: 3 }), answer: text }),
      { maxLength: 3 },
    ),
  }),
  item(
    "directions",
    {
      text,
      options: fc.array(withOptional(["title"], { title: text, description: text }), {
        maxLength: 3,
      }),
      chosen: fc.nat(5),
    },
    ["chosen"],
  ),
  item("skillProposal", { name: text, description: text, instructions: text }),
  item("lintRuleProposal", { name: text, description: text, rule: text }),
  item("toolApproval", { callID: text, toolName: text, summary: text }),
  item("webSearch", {
    query: text,
    results: fc.array(fc.record({ title: text, url: text }), { maxLength: 3 }),
  }),
  item("reportedIssue", { title: text, body: text }),
);

function idMapOf<T>(value: fc.Arbitrary<T>): fc.Arbitrary<Map<string, T>> {
  return fc
    .uniqueArray(fc.tuple(fc.oneof(id, anyKey), value), { maxLength: 4, selector: ([key]) => key })
    .map((entries) => new Map(entries));
}

const usage = withOptional(["input", "output", "cacheRead", "cacheWrite", "webSearchRequests"], {
  input: anyCount,
  output: anyCount,
  cacheRead: anyCount,
  cacheWrite: anyCount,
  webSearchRequests: anyCount,
  cacheWrite1h: anyCount,
  reportedCost: anyNonNegative,
});

const cost = fc.oneof(
  fc.record({ kind: fc.constant("reported" as const), dollars: anyNonNegative }),
  withOptional(["kind", "dollars"], {
    kind: fc.constant("estimated" as const),
    dollars: anyNonNegative,
    partial: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("unknown" as const) }),
  fc.record({ kind: fc.constant("notBilled" as const) }),
);

const pending = withOptional(["id", "text"], {
  id,
  text,
  images: fc.array(fc.record({ sha256, mimeType }), { maxLength: 2 }),
});

const sentFact = withOptional(["message"], {
  message: anyCount,
  sections: idMapOf(sha256),
});

export const anySavedConversation: fc.Arbitrary<SavedConversation> = withOptional(
  [
    "formatVersion",
    "items",
    "feedback",
    "skillCards",
    "lintRuleCards",
    "approvalCards",
    "resolvedCards",
    "history",
    "queued",
    "unsent",
    "usage",
    "estimatedCost",
    "sentFacts",
  ],
  {
    formatVersion: fc.constant(1 as const),
    provider: text,
    model: text,
    items: fc.array(anyItem, { maxLength: 6 }),
    feedback: idMapOf(
      withOptional(["rating", "reasons"], {
        rating: fc.constantFrom("good" as const, "bad" as const),
        reasons: fc.array(text, { maxLength: 2 }),
        comment: text,
      }),
    ),
    skillCards: idMapOf(fc.record({ state: fc.constantFrom("pending", "saved", "dismissed") })),
    lintRuleCards: idMapOf(fc.record({ state: fc.constantFrom("pending", "added", "dismissed") })),
    approvalCards: idMapOf(
      withOptional(["state"], {
        state: fc.constantFrom("pending", "approved", "denied"),
        alwaysAllow: fc.boolean(),
      }),
    ),
    resolvedCards: fc.array(id, { maxLength: 3 }),
    history: fc.array(anyMessage, { maxLength: 5 }),
    queued: fc.array(pending, { maxLength: 2 }),
    unsent: fc.array(pending, { maxLength: 2 }),
    usage,
    lastRoundUsage: usage,
    estimatedCost: cost,
    sentFacts: fc.array(sentFact, { maxLength: 3 }),
  },
) as fc.Arbitrary<SavedConversation>;
