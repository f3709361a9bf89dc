import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../core/hash.js";
import { decodeConversation } from "./decode.js";
import { encodeConversation } from "./encode.js";
import type { SavedConversation } from "./conversation-schema.js";

/**
 * The example of format 1 printed in the specification (seed 000, the block under
 * "例（テストは実際のデコーダーでこれをデコードします）"), copied byte for byte into
 * test/fixtures/format-1/seed-example.json. It is a test vector: the real decoder reads it.
 */
const fixtures = new URL("../../../../test/fixtures/format-1/", import.meta.url);
const seedBytes = readFileSync(new URL("seed-example.json", fixtures));

function decodeSeed(): SavedConversation {
  const result = decodeConversation(seedBytes);
  if (!result.ok) throw new Error(result.reason.message);
  return result.conversation;
}

describe("the seed's example (A12)", () => {
  // The passage of seed 000 that prints the example (its heading line, a blank line, the block),
  // copied byte for byte into the repository; test/fixtures/seeds/SOURCES.md records where from.
  const excerpt = readFileSync(
    new URL("../../../../test/fixtures/seeds/000-format-1-example.txt", import.meta.url),
  );

  it("A12 is the block printed in the specification, byte for byte", () => {
    const heading = "例（テストは実際のデコーダーでこれをデコードします）:\n\n";
    expect(excerpt.toString("utf8")).toBe(heading + seedBytes.toString("utf8"));
  });

  it("A12 the passage is the copy whose SHA-256 SOURCES.md records", () => {
    const sources = readFileSync(
      new URL("../../../../test/fixtures/seeds/SOURCES.md", import.meta.url),
      "utf8",
    );
    const row = sources.split("\n").find((line) => line.startsWith("| `000-format-1-example.txt`"));
    expect(row?.match(/`([0-9a-f]{64})` \|$/)?.[1]).toBe(sha256Hex(excerpt));
  });

  it("A12 A6 decodes with the real decoder to every value it shows", () => {
    const conversation = decodeSeed();
    expect(conversation.formatVersion).toBe(1);
    expect(conversation.provider).toBe("anthropic");
    expect(conversation.model).toBe("claude-opus-5-5");
    expect(conversation.approvalCards).toEqual(new Map());
    expect(conversation.skillCards).toEqual(new Map());
    expect(conversation.lintRuleCards).toEqual(new Map());
    expect(conversation.resolvedCards).toEqual([]);
    expect(conversation.queued).toEqual([]);
    expect(conversation.unsent).toEqual([]);
    expect(conversation.estimatedCost).toEqual({ kind: "estimated", dollars: 0.0213 });
    expect(conversation.feedback).toEqual(
      new Map([["6F1C2A1E-2B1B-4C7A-9E43-1D2F3A4B5C60", { rating: "good", reasons: [] }]]),
    );
    expect(conversation.items).toEqual([
      {
        hasImage: true,
        id: "0D7E8C55-0F3A-4E7B-8D61-2B9A0C1D2E30",
        text: "Make a card",
        type: "user",
      },
      {
        detail: "arguments:\n{}",
        id: "1A2B3C4D-5E6F-4A7B-8C9D-0E1F2A3B4C50",
        name: "batch_design",
        status: "succeeded",
        statusText: "1 created",
        summary: "Card",
        type: "tool",
      },
      { id: "6F1C2A1E-2B1B-4C7A-9E43-1D2F3A4B5C60", text: "Made a card.", type: "assistant" },
    ]);
    expect(conversation.lastRoundUsage).toEqual({
      cacheRead: 0,
      cacheWrite: 0,
      input: 1500,
      output: 40,
      webSearchRequests: 0,
    });
    expect(conversation.usage).toEqual({
      cacheRead: 0,
      cacheWrite: 0,
      input: 2500,
      output: 80,
      webSearchRequests: 0,
    });
    expect(conversation.sentFacts).toEqual([{ message: 0 }]);
  });

  it("A12 A11 decodes the history block by block", () => {
    expect(decodeSeed().history).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "# This turn\nMode: Just do it\n\nMake a card" },
          {
            type: "image",
            mimeType: "image/png",
            sha256: "9f2c0d8e4b1a7c3e5f6a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e",
          },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Adding a card." },
          {
            type: "toolCall",
            arguments: '{"operations":"[]"}',
            id: "toolu_1",
            name: "batch_design",
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "toolResult",
            callID: "toolu_1",
            content: '{"created":[]}',
            isError: false,
            toolName: "batch_design",
          },
        ],
      },
      {
        role: "user",
        content: [
          { type: "text", text: "Here is the image you asked for." },
          { type: "imageOmitted", mimeType: "image/png" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Made a card." }] },
    ]);
  });

  it("A12 A9 counts one turn: the user message carrying a tool's image sits inside it", () => {
    const conversation = decodeSeed();
    expect(conversation.sentFacts.map((fact) => fact.message)).toEqual([0]);
    expect(conversation.history[3]?.role).toBe("user");
  });

  it("A12 A2 its canonical bytes are the checked-in file whose hash is in the manifest", () => {
    const canonical = encodeConversation(decodeSeed());
    const checkedIn = readFileSync(new URL("seed-example.canonical.json", fixtures));
    expect(canonical.equals(checkedIn)).toBe(true);
    const manifest = JSON.parse(readFileSync(new URL("manifest.json", fixtures), "utf8")) as {
      files: Record<string, { sha256: string }>;
    };
    expect(manifest.files["seed-example.canonical.json"]?.sha256).toBe(sha256Hex(canonical));
    expect(sha256Hex(canonical)).toBe(
      "abcc2b52b58c8d834c730856c54985ff08bc281b12316c77ec8a9686a9ee9958",
    );
  });

  it("A2 the seed's one-line small objects are not canonical: canonical expands every container", () => {
    const canonical = encodeConversation(decodeSeed()).toString("utf8");
    expect(canonical).not.toBe(seedBytes.toString("utf8"));
    expect(canonical).toContain(
      '  "estimatedCost" : {\n    "dollars" : 0.0213,\n    "kind" : "estimated"\n  },\n',
    );
    expect(canonical).toContain('  "sentFacts" : [\n    {\n      "message" : 0\n    }\n  ],\n');
    expect(canonical.endsWith("}\n")).toBe(true);
  });
});
