import { describe, expect, it } from "vitest";
import { openArchive } from "../../packages/library/src/archive/index.js";
import type { Message } from "../../packages/library/src/history/message.js";
import { conversationWith, newPackage } from "./helpers.js";

function everyObjectFrozen(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every(everyObjectFrozen);
}

// Issue 15: the open freezes what it returns by a plain walk (no table entry per object), and a
// later save walks only the elements that are new; what each took in is still frozen throughout.
describe("what the open returns is frozen (issue 15)", () => {
  it("every history message and item read, all the way down; a later save freezes the new one", async () => {
    const folder = await newPackage();
    const first = await openArchive(folder);
    const saved = conversationWith(
      [{ type: "text", text: "first" }],
      [{ type: "text", text: "second" }],
    );
    expect((await first.archive.save(saved, new Map())).outcome).toBe("rewritten");

    const reopened = await openArchive(folder);
    const { history } = reopened.conversation;
    expect(history).toHaveLength(2);
    for (const message of history) expect(everyObjectFrozen(message)).toBe(true);
    for (const item of reopened.conversation.items) expect(everyObjectFrozen(item)).toBe(true);
    expect(Object.isFrozen(history)).toBe(false);

    const added: Message = { role: "user", content: [{ type: "text", text: "third" }] };
    const grown = { ...reopened.conversation, history: [...history, added] };
    expect((await reopened.archive.save(grown, new Map())).outcome).toBe("rewritten");
    expect(everyObjectFrozen(added)).toBe(true);
    expect(() => {
      (added.content[0] as { text: string }).text = "changed";
    }).toThrow(TypeError);
  });
});
