import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  toolCallArgumentBytes,
  toolCallArgumentText,
  toolCallFromBytes,
  toolResultBytes,
  toolResultFromBytes,
  toolResultText,
} from "./blocks.js";
import { IMAGE_OMITTED_TEXT } from "./message.js";
import { blockSchema, messageIsWellFormed, messageSchema } from "./schema.js";

describe("tool blocks keep their bytes (A11, A26)", () => {
  it("A11 stores UTF-8 arguments as text and other bytes as base64", () => {
    expect(toolCallFromBytes("c1", "t", Buffer.from('{"a":"é"}'))).toEqual({
      type: "toolCall",
      id: "c1",
      name: "t",
      arguments: '{"a":"é"}',
    });
    expect(toolCallFromBytes("c1", "t", new Uint8Array([0xff, 0x41]))).toEqual({
      type: "toolCall",
      id: "c1",
      name: "t",
      argumentsBase64: "/0E=",
    });
    expect(toolResultFromBytes("c1", "t", true, new Uint8Array([0xc3, 0x28]))).toEqual({
      type: "toolResult",
      callID: "c1",
      toolName: "t",
      isError: true,
      contentBase64: "wyg=",
    });
  });

  it("A26 gives back exactly the bytes it was given, UTF-8 or not", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (bytes, isError) => {
        const call = toolCallFromBytes("id", "name", bytes);
        const result = toolResultFromBytes("id", "name", isError, bytes);
        expect(Buffer.from(toolCallArgumentBytes(call)).equals(Buffer.from(bytes))).toBe(true);
        expect(Buffer.from(toolResultBytes(result)).equals(Buffer.from(bytes))).toBe(true);
        expect(blockSchema.safeParse(call).success).toBe(true);
        expect(blockSchema.safeParse(result).success).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("A11 gives wire formats that take strings U+FFFD for bytes that are not UTF-8", () => {
    const call = toolCallFromBytes("id", "name", new Uint8Array([0x61, 0xff, 0x62]));
    expect(toolCallArgumentText(call)).toBe("a\ufffdb");
    const result = toolResultFromBytes("id", "name", false, Buffer.from("plain"));
    expect(toolResultText(result)).toBe("plain");
  });
});

describe("message schema (A11, A23)", () => {
  it("A11 accepts the five block types and refuses anything else", () => {
    const message = {
      role: "user",
      content: [
        { type: "text", text: "hi" },
        { type: "image", sha256: "0".repeat(64), mimeType: "image/png" },
        { type: "imageOmitted", mimeType: "image/jpeg" },
      ],
    };
    expect(messageSchema.safeParse(message).success).toBe(true);
    const refused = [
      { role: "system", content: [] },
      { role: "user", content: [{ type: "thinking", text: "x" }] },
      { role: "user", content: [{ type: "text", text: "x", signature: "s" }] },
      { role: "user", content: [], extra: 1 },
      {
        role: "tool",
        content: [{ type: "toolResult", callID: "c", toolName: "t", isError: false }],
      },
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "c", name: "t", argumentsBase64: "a b" }],
      },
    ];
    for (const value of refused) expect(messageSchema.safeParse(value).success).toBe(false);
  });

  it("A23 refuses provider-specific keys on a block, such as cache_control", () => {
    const result = messageSchema.safeParse({
      role: "assistant",
      content: [{ type: "text", text: "x", cache_control: { type: "ephemeral" } }],
    });
    expect(result.success).toBe(false);
  });

  it("A16 names the placeholder text the model gets for an omitted image", () => {
    expect(IMAGE_OMITTED_TEXT).toBe(
      "[Image omitted: an image was here but was dropped from the saved conversation to save space.]",
    );
  });

  it("messageIsWellFormed finds lone surrogates", () => {
    expect(messageIsWellFormed({ role: "user", content: [{ type: "text", text: "😀" }] })).toBe(
      true,
    );
    expect(messageIsWellFormed({ role: "user", content: [{ type: "text", text: "\ud800" }] })).toBe(
      false,
    );
  });
});
