import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolCallNames } from "./tool-names.js";

// Issue 33 (CPU per recorded call): a tool result names the call of the nearest assistant
// message before it with its id; placing a call that adds a turn to a long history reads the
// last messages, not the whole history.

const ids = ["a", "b", "c", "d"];

const block = fc.oneof(
  fc.record({ type: fc.constant("tool_use"), id: fc.constantFrom(...ids), name: fc.string() }),
  fc.record({ type: fc.constant("text"), text: fc.string() }),
);
const message = fc.record({
  role: fc.constantFrom("user", "assistant"),
  content: fc.array(block, { maxLength: 4 }),
});

/** The rule, read naively: the nearest assistant message before, its first call of the id. */
function expected(messages: readonly unknown[], before: number, id: string): string {
  for (let index = before - 1; index >= 0; index--) {
    const entry = messages[index] as {
      role: string;
      content: { type: string; id?: string; name?: string }[];
    };
    if (entry.role !== "assistant") continue;
    const call = entry.content.find((part) => part.type === "tool_use" && part.id === id);
    if (call !== undefined) return call.name ?? "";
  }
  return "";
}

describe("ToolCallNames", () => {
  it("names the nearest call of an id, asked in order from any first place", () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 30 }),
        fc.nat(),
        fc.array(fc.tuple(fc.nat(4), fc.constantFrom(...ids, "none")), { maxLength: 12 }),
        (messages, first, asks) => {
          const names = new ToolCallNames("anthropic-messages", messages);
          let before = messages.length === 0 ? 0 : first % (messages.length + 1);
          for (const [step, id] of asks) {
            before = Math.min(messages.length, before + step);
            expect(names.nameOf(before, id)).toBe(expected(messages, before, id));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads only the last messages for a turn added to a long history", () => {
    const history: unknown[] = [];
    for (let index = 0; index < 10_000; index++) {
      history.push(
        index % 2 === 0
          ? { role: "user", content: [{ type: "tool_result", tool_use_id: `t${index - 1}` }] }
          : {
              role: "assistant",
              content: [{ type: "tool_use", id: `t${index}`, name: `n${index}` }],
            },
      );
    }
    let reads = 0;
    const counted = new Proxy(history, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const names = new ToolCallNames("anthropic-messages", counted);
    // The new turn: the result at 9,998 of the call at 9,997, then one more pair.
    expect(names.nameOf(9_998, "t9997")).toBe("n9997");
    expect(names.nameOf(10_000, "t9999")).toBe("n9999");
    expect(reads).toBeLessThan(10);
    // An id no call has: read back to the start once, not once per result.
    expect(names.nameOf(10_000, "missing")).toBe("");
    const once = reads;
    expect(names.nameOf(10_000, "also-missing")).toBe("");
    expect(reads).toBe(once);
  });
});
