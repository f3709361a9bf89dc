import { describe, expect, it } from "vitest";
import type { ChatMLMessage } from "../history/chatml.js";
import { fitPageToLimit, pageByteLength } from "./paging.js";
import type { ProjectedMessages } from "./index.js";

const page = (messages: ChatMLMessage[]): ProjectedMessages => ({
  messages,
  metadata: { redacted: false, content_truncated: false },
});

describe("control-plane paging", () => {
  const sample = page([
    { role: "user", content: "short question" },
    { role: "assistant", content: "a".repeat(400) },
    {
      role: "tool",
      tool_call_id: "c1",
      name: "read",
      content: "b".repeat(200),
      metadata: { execution_mechanism: "local_dynamic" },
    },
  ]);

  it("B12 returns a page that fits unchanged, content_truncated stays false", () => {
    const size = pageByteLength(sample);
    expect(fitPageToLimit(sample, { limitBytes: size })).toBe(sample);
  });

  it("B12 counts UTF-8 bytes of compact JSON", () => {
    const p = page([{ role: "user", content: 'é😀\n"' }]);
    expect(pageByteLength(p)).toBe(new TextEncoder().encode(JSON.stringify(p)).length);
  });

  it("B12 cuts the longest content first and sets content_truncated", () => {
    const size = pageByteLength(sample);
    const cut = fitPageToLimit(sample, { limitBytes: size - 100 });
    expect(pageByteLength(cut)).toBeLessThanOrEqual(size - 100);
    expect(cut.metadata.content_truncated).toBe(true);
    const [user, assistant, tool] = cut.messages;
    expect(user).toEqual(sample.messages[0]);
    expect(tool?.content).toBe("b".repeat(200));
    expect(assistant?.content).toMatch(/^a{299,301}$/);
    expect(assistant?.metadata).toBeUndefined();
    expect(sample.messages[1]?.content).toHaveLength(400);
  });

  it("B12 cuts several long contents down to a common level when one is not enough", () => {
    const size = pageByteLength(sample);
    const cut = fitPageToLimit(sample, { limitBytes: size - 450 });
    expect(pageByteLength(cut)).toBeLessThanOrEqual(size - 450);
    const lengths = cut.messages.map((message) => String(message.content).length);
    expect(lengths[0]).toBe("short question".length);
    expect(Math.abs((lengths[1] ?? 0) - (lengths[2] ?? 0))).toBeLessThanOrEqual(30);
    expect(cut.messages[2]?.metadata).toEqual({ execution_mechanism: "local_dynamic" });
  });

  it("B12 cuts at a code point boundary, never inside a surrogate pair", () => {
    const emoji = page([{ role: "assistant", content: "😀".repeat(100) }]);
    for (let limit = 141; limit < pageByteLength(emoji); limit += 7) {
      const cut = fitPageToLimit(emoji, { limitBytes: limit });
      const content = cut.messages[0]?.content as string;
      expect(content).toBe("😀".repeat(content.length / 2));
      expect(pageByteLength(cut)).toBeLessThanOrEqual(limit);
    }
  });

  it("B12 cuts text parts and tool-call arguments too", () => {
    const p = page([
      {
        role: "user",
        content: [
          { type: "text", text: "x".repeat(300) },
          { type: "image_url", image_url: { url: "https://e.com/i.png" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c", type: "function", function: { name: "f", arguments: "y".repeat(300) } },
        ],
      },
    ]);
    const cut = fitPageToLimit(p, { limitBytes: pageByteLength(p) - 300 });
    expect(pageByteLength(cut)).toBeLessThanOrEqual(pageByteLength(p) - 300);
    expect(JSON.stringify(cut)).toContain("https://e.com/i.png");
    expect(cut.metadata.content_truncated).toBe(true);
    const [user, assistant] = cut.messages;
    expect(JSON.stringify(user)).toMatch(/"x{150,}"/);
    expect(
      assistant?.role === "assistant" && assistant.tool_calls?.[0]?.function.arguments,
    ).toMatch(/^y{150,}$/);
  });

  it("refuses a limit the page cannot fit with every content empty", () => {
    expect(() => fitPageToLimit(sample, { limitBytes: 50 })).toThrow(
      expect.objectContaining({ code: "trajectory_page_limit_too_small" }),
    );
    expect(() => fitPageToLimit(sample, { limitBytes: -1 })).toThrow(/whole number/);
  });
});
