import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeConversation } from "../format/encode.js";
import { emptyConversation } from "../format/empty.js";
import type { SavedConversation } from "../format/conversation-schema.js";
import { anySavedConversation } from "../../../../test/support/saved-conversation-arbitrary.js";
import { ConversationEncoder, piecesEqualBytes, samePieces, streamedPieces } from "./encoder.js";

describe("the incremental encoder", () => {
  it("A2 writes exactly the canonical bytes of encodeConversation", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        const pieces = new ConversationEncoder().encode(conversation);
        expect(Buffer.concat(pieces)).toEqual(encodeConversation(conversation));
      }),
      { numRuns: 40 },
    );
  });

  it("A2 the streamed pieces of a large save are the same canonical bytes", () => {
    fc.assert(
      fc.property(anySavedConversation, (conversation) => {
        expect(Buffer.concat([...streamedPieces(conversation)])).toEqual(
          encodeConversation(conversation),
        );
      }),
      { numRuns: 60 },
    );
    // Arrays of many pieces (about 32K characters each), and an empty conversation object.
    const long: SavedConversation = {
      ...emptyConversation(),
      items: Array.from({ length: 700 }, (_, index) => ({
        id: `i${index}`,
        type: "user" as const,
        text: `text ${index} デザイン 🎨 `.repeat(index % 50),
      })),
      resolvedCards: Array.from({ length: 513 }, (_, index) => `card ${index}`),
    };
    expect(Buffer.concat([...streamedPieces(long)])).toEqual(encodeConversation(long));
    const pieces = [...streamedPieces(long)];
    expect(pieces.length).toBeGreaterThan(6);
    expect(Buffer.concat([...streamedPieces({} as SavedConversation)]).toString()).toBe("{}\n");
  });

  it("A2 reused pieces still give the canonical bytes after any change between saves", () => {
    fc.assert(
      fc.property(anySavedConversation, anySavedConversation, (first, second) => {
        const encoder = new ConversationEncoder();
        const before = encoder.encode(first);
        // The second conversation shares the first one's elements where it can.
        const mixed: SavedConversation = {
          ...second,
          history: [...first.history, ...second.history],
          items: [...first.items, ...second.items],
          feedback: new Map([...first.feedback, ...second.feedback]),
        };
        const after = encoder.encode(mixed);
        expect(Buffer.concat(after)).toEqual(encodeConversation(mixed));
        expect(piecesEqualBytes(after, encodeConversation(mixed))).toBe(true);
        expect(samePieces(after, encoder.encode(mixed))).toBe(true);
        expect(samePieces(before, after)).toBe(Buffer.concat(before).equals(Buffer.concat(after)));
      }),
      { numRuns: 25 },
    );
  });

  it("A2 a message replaced by a new object is encoded again", () => {
    const conversation: SavedConversation = {
      ...(fc.sample(anySavedConversation, { numRuns: 1, seed: 7 })[0] as SavedConversation),
      history: [{ role: "user", content: [{ type: "text", text: "a" }] }],
    };
    const encoder = new ConversationEncoder();
    const first = Buffer.concat(encoder.encode(conversation));
    const replaced = {
      ...conversation,
      history: [{ role: "user" as const, content: [{ type: "text" as const, text: "b" }] }],
    };
    const second = Buffer.concat(encoder.encode(replaced));
    expect(second).toEqual(encodeConversation(replaced));
    expect(second.equals(first)).toBe(false);
  });

  it("A2 long arrays, joined into runs, stay byte for byte canonical as they grow and change", () => {
    const base = {
      ...emptyConversation(),
      feedback: new Map([["a", { rating: "good" as const, reasons: [] }]]),
    };
    const message = (index: number) => ({
      role: "user" as const,
      content: [{ type: "text" as const, text: `message ${index} 日本語 🎨` }],
    });
    const encoder = new ConversationEncoder();
    let history = Array.from({ length: 700 }, (_, index) => message(index));
    for (const change of [
      "append",
      "replace inside a run",
      "append to a full run",
      "drop the first",
      "shrink",
    ]) {
      if (change === "append") history = [...history, message(700)];
      if (change === "replace inside a run")
        history = history.map((m, i) => (i === 300 ? message(-1) : m));
      if (change === "append to a full run")
        history = [...history, ...Array.from({ length: 100 }, (_, i) => message(800 + i))];
      if (change === "drop the first") history = history.slice(1);
      if (change === "shrink") history = history.slice(0, 512);
      const conversation = { ...base, history };
      expect(Buffer.concat(encoder.encode(conversation)), change).toEqual(
        encodeConversation(conversation),
      );
    }
  });
});
