import { describe, expect, it } from "vitest";
import { canonicalJsonText } from "../core/canonical-json.js";
import { VerbatimError } from "../core/errors.js";
import { decodeConversation, decodeConversationOrThrow, type DecodeResult } from "./decode.js";
import { createHistoryEncodingCache, encodeConversation } from "./encode.js";
import { emptyConversation, isEmptyConversation } from "./empty.js";
import { conversationSchema, type SavedConversation } from "./conversation-schema.js";

/** Decodes a conversation given as a JS value with Maps (written canonically first). */
function decodeValue(value: unknown): DecodeResult {
  return decodeConversation(Buffer.from(canonicalJsonText(value)));
}

const base = emptyConversation();

describe("format 1 fields", () => {
  it("A7 writes cacheWrite1h and reportedCost only when present", () => {
    const without = encodeConversation(base).toString();
    expect(without).not.toContain("cacheWrite1h");
    expect(without).not.toContain("reportedCost");
    const withBoth: SavedConversation = {
      ...base,
      usage: { ...base.usage, cacheWrite: 10, cacheWrite1h: 4, reportedCost: 0.25 },
    };
    const text = encodeConversation(withBoth).toString();
    expect(text).toContain('"cacheWrite1h" : 4,');
    expect(text).toContain('"reportedCost" : 0.25,');
    const decoded = decodeConversation(Buffer.from(text));
    expect(decoded.ok && decoded.conversation.usage).toEqual(withBoth.usage);
  });

  it("A7 refuses a usage without one of its five required counts, or with a fraction", () => {
    const { webSearchRequests: _dropped, ...partial } = base.usage;
    const missing = decodeValue({ ...base, usage: partial });
    expect(!missing.ok && missing.reason).toMatchObject({
      fieldProblem: "missingKey",
      path: "$.usage.webSearchRequests",
    });
    const fraction = decodeValue({ ...base, usage: { ...base.usage, input: 1.5 } });
    expect(!fraction.ok && fraction.reason.path).toBe("$.usage.input");
  });

  it("A8 reads the four cost kinds, each with exactly its own keys", () => {
    const kinds = [
      { kind: "reported", dollars: 0.5 },
      { kind: "estimated", dollars: 0.0213 },
      { kind: "estimated", dollars: 1e-7, partial: true },
      { kind: "unknown" },
      { kind: "notBilled" },
    ];
    for (const estimatedCost of kinds) {
      const result = decodeValue({ ...base, estimatedCost });
      expect(result.ok && result.conversation.estimatedCost).toEqual(estimatedCost);
    }
    const noDollars = decodeValue({ ...base, estimatedCost: { kind: "reported" } });
    expect(!noDollars.ok && noDollars.reason.path).toBe("$.estimatedCost.dollars");
    const extra = decodeValue({ ...base, estimatedCost: { kind: "unknown", dollars: 1 } });
    expect(!extra.ok && extra.reason).toMatchObject({
      fieldProblem: "unknownKey",
      path: "$.estimatedCost.dollars",
    });
    const negative = decodeValue({ ...base, estimatedCost: { kind: "reported", dollars: -1 } });
    expect(!negative.ok && negative.reason.fieldProblem).toBe("invalidValue");
  });

  it("A9 reads sentFacts: where each turn starts and the sections it left, by hash", () => {
    const hash = "ab".repeat(32);
    const sentFacts = [{ message: 0, sections: new Map([["designSystem", hash]]) }, { message: 4 }];
    const result = decodeValue({ ...base, sentFacts });
    expect(result.ok && result.conversation.sentFacts).toEqual(sentFacts);
    const badHash = decodeValue({
      ...base,
      sentFacts: [{ message: 0, sections: new Map([["designSystem", "xyz"]]) }],
    });
    expect(!badHash.ok && badHash.reason.path).toBe("$.sentFacts[0].sections.designSystem");
  });

  it("A6 A10a keeps queued and unsent messages with their images", () => {
    const queued = [
      {
        id: "q1",
        text: "and make it blue",
        images: [{ sha256: "cd".repeat(32), mimeType: "image/png" }],
      },
    ];
    const unsent = [{ id: "u1", text: "stop here" }];
    const result = decodeValue({ ...base, queued, unsent });
    expect(result.ok && [result.conversation.queued, result.conversation.unsent]).toEqual([
      queued,
      unsent,
    ]);
  });

  it("A6 detail and citations are allowed on every item type", () => {
    const items = [
      { id: "1", type: "failure", message: "529", detail: "overloaded", citations: [] },
      { id: "2", type: "thinking", text: "…", citations: [{ url: "https://example.com" }] },
    ];
    const result = decodeValue({ ...base, items });
    expect(result.ok && result.conversation.items).toEqual(items);
  });

  it("A4 A13 the empty conversation is empty and round-trips", () => {
    expect(isEmptyConversation(base)).toBe(true);
    expect(isEmptyConversation({ ...base, unsent: [{ id: "u", text: "x" }] })).toBe(false);
    const result = decodeConversation(encodeConversation(base));
    expect(result.ok && result.conversation).toEqual(base);
  });

  it("A14 otherVersion for a version that is not a positive integer", () => {
    for (const formatVersion of [0, 1.5, -1, null, "1"]) {
      const result = decodeValue({ ...base, formatVersion });
      expect(!result.ok && result.reason.kind).toBe("otherVersion");
    }
    const newer = decodeValue({ ...base, formatVersion: 3 });
    expect(!newer.ok && newer.reason).toMatchObject({ kind: "newerVersion", foundVersion: 3 });
  });

  it("A14 decodeConversationOrThrow throws unreadable_conversation with the reason", () => {
    expect(decodeConversationOrThrow(encodeConversation(base))).toEqual(base);
    let caught: unknown;
    try {
      decodeConversationOrThrow(
        Buffer.from('{"formatVersion" : 2}'),
        "Poster/agent/conversation.json",
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(VerbatimError);
    const error = caught as VerbatimError;
    expect(error.code).toBe("unreadable_conversation");
    expect(error.where).toBe("$.formatVersion");
    expect(error.message).toMatch(/^Poster\/agent\/conversation.json is unreadable: .*format 2/);
    expect(error.details).toMatchObject({ kind: "newerVersion", foundVersion: 2 });
  });

  it("A2 a refused value in history names the same path with and without the cache", () => {
    const whereOf = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as VerbatimError).where;
      }
      return "written";
    };
    const nan = { ...base, usage: { ...base.usage, input: Number.NaN } };
    expect(whereOf(() => encodeConversation(nan))).toBe("$.usage.input");
    const broken = {
      ...base,
      history: [{ role: "user", content: [{ type: "text", text: "a" }, null, [Number.NaN]] }],
    } as unknown as SavedConversation;
    expect(whereOf(() => encodeConversation(broken))).toBe("$.history[0].content[2][0]");
    expect(whereOf(() => encodeConversation(broken, createHistoryEncodingCache()))).toBe(
      "$.history[0].content[2][0]",
    );
  });

  it("A6 an already decoded conversation (with Maps) validates again to itself", () => {
    const decoded = decodeConversationOrThrow(
      encodeConversation({
        ...base,
        feedback: new Map([["__proto__", { rating: "good" as const, reasons: [] }]]),
        approvalCards: new Map([["constructor", { state: "pending" as const }]]),
      }),
    );
    const again = conversationSchema.safeParse(decoded);
    expect(again.success && again.data).toEqual(decoded);
    expect(again.success && again.data.feedback.size).toBe(1);
    const badKey = conversationSchema.safeParse({ ...decoded, feedback: new Map([[1, {}]]) });
    expect(badKey.success).toBe(false);
  });
});
