import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeConversation, encodeConversation } from "../format/index.js";
import { createLiveConversation } from "./live-conversation.js";
import { openToolCalls } from "./tool-calls.js";
import { scriptedBackend, type ScriptStep } from "../../../../test/support/scripted-backend.js";
import {
  counterIds,
  deleteTool,
  echoTool,
  testPrices,
} from "../../../../test/support/conversation-fixtures.js";

const step: fc.Arbitrary<ScriptStep> = fc.oneof(
  fc.record({ text: fc.string({ minLength: 1, maxLength: 12 }) }),
  fc.record({
    text: fc.string({ maxLength: 6 }),
    calls: fc.array(
      fc.record({
        id: fc.uuid(),
        name: fc.constantFrom("echo", "delete_page", "missing_tool"),
        arguments: fc.constantFrom("{}", '{"text":"é"}', "not json"),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  }),
  fc.constant({ fail: "HTTP 500" }),
);

const action = fc.oneof(
  fc.record({
    kind: fc.constant("send" as const),
    text: fc.string({ minLength: 1, maxLength: 8 }).filter((text) => text.trim() !== ""),
  }),
  fc.record({ kind: fc.constant("approve" as const), approved: fc.boolean() }),
  fc.record({ kind: fc.constant("cancel" as const) }),
  fc.record({ kind: fc.constant("rate" as const) }),
);

describe("the live conversation under random use", () => {
  it("A6 A9 after any sequence of operations the state is valid format 1, round-trips, and every tool call has its result once idle", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 12 }),
        fc.array(action, { maxLength: 10 }),
        async (steps, actions) => {
          const backend = scriptedBackend([
            ...steps,
            ...Array.from({ length: 40 }, () => ({ text: "ok" })),
          ]);
          const conversation = createLiveConversation({
            backend,
            tools: [echoTool, deleteTool()],
            sections: () => [{ name: "Document", content: "Page" }],
            newId: counterIds(),
            prices: testPrices,
          });
          for (const next of actions) {
            if (next.kind === "send") conversation.send(next.text);
            else if (next.kind === "cancel") conversation.cancel();
            else if (next.kind === "rate") {
              const last = conversation.items.at(-1);
              if (last !== undefined) conversation.rate(last.id, { rating: "good", reasons: [] });
            } else {
              await conversation.whenIdle();
              const pending = [...conversation.snapshot().approvalCards].find(
                ([, card]) => card.state === "pending",
              );
              if (pending !== undefined)
                conversation.answerApproval(pending[0], { approved: next.approved });
            }
          }
          await conversation.whenIdle();
          conversation.cancel();
          await conversation.whenIdle();
          const saved = conversation.snapshot();
          const decoded = decodeConversation(encodeConversation(saved));
          expect(decoded.ok).toBe(true);
          if (decoded.ok) expect(decoded.conversation).toEqual(saved);
          expect(openToolCalls(saved.history)).toBeUndefined();
          const starts = saved.sentFacts.map((fact) => fact.message);
          expect([...starts].sort((a, b) => a - b)).toEqual(starts);
          for (const start of starts) expect(saved.history[start]?.role).toBe("user");
          expect([...saved.approvalCards.values()].every((card) => card.state !== "pending")).toBe(
            true,
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});
