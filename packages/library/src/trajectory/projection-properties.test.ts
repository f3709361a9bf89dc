import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anyText } from "../../../../test/support/text-arbitraries.js";
import type { ChatMLMessage } from "../history/chatml.js";
import { pageByteLength } from "./paging.js";
import {
  fitPageToLimit,
  modelVisibleJson,
  modelVisibleTrajectory,
  projectTrajectoryToChatML,
  type ChatMLTrajectory,
  type StoredTurnItem,
  type TrajectoryItem,
} from "./index.js";

/**
 * Property tests of the projections (B9, B12): arbitrary job trajectories of several turns with
 * tool calls answered in any order, unanswered calls, orphan results, repeated call ids and
 * items that project to no message. Every stored identity starts with `ID-` and a UUID.
 */
const mechanism = fc.constantFrom("provider_hosted" as const, "local_dynamic" as const);

type Step =
  | { kind: "say"; role: "user" | "agent" | "system"; text: string }
  | { kind: "silent"; text: string }
  | {
      kind: "call";
      slot: number;
      name: string;
      args: string;
      mechanism: "provider_hosted" | "local_dynamic";
    }
  | { kind: "result"; slot: number; output: string }
  | { kind: "command"; slot: number; output: string; done: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("say" as const),
    role: fc.constantFrom("user" as const, "agent" as const, "system" as const),
    text: anyText(),
  }),
  fc.record({ kind: fc.constant("silent" as const), text: anyText() }),
  fc.record({
    kind: fc.constant("call" as const),
    slot: fc.nat(4),
    name: fc.constantFrom("lookup", "read", "f"),
    args: anyText(),
    mechanism,
  }),
  fc.record({ kind: fc.constant("result" as const), slot: fc.nat(4), output: anyText() }),
  fc.record({
    kind: fc.constant("command" as const),
    slot: fc.nat(4),
    output: anyText(),
    done: fc.boolean(),
  }),
);

const trajectory = fc
  .record({
    turns: fc.array(fc.array(step, { maxLength: 14 }), { minLength: 1, maxLength: 4 }),
    ids: fc.array(fc.uuid(), { minLength: 40, maxLength: 40 }),
    jobId: fc.uuid(),
  })
  .map(({ turns, ids, jobId }) => {
    const rows: StoredTurnItem[] = [];
    const id = (index: number) => `ID-${ids[index % ids.length] ?? ""}`;
    turns.forEach((steps, turnIndex) => {
      const turnId = `ID-${jobId}-t${turnIndex}`;
      const callSlots = new Map<
        number,
        { name: string; mechanism: "provider_hosted" | "local_dynamic" }
      >();
      steps.forEach((entry, position) => {
        const callId = (slot: number) => id(turnIndex * 5 + slot);
        let item: TrajectoryItem;
        switch (entry.kind) {
          case "say":
            item =
              entry.role === "agent"
                ? {
                    type: "agent_message",
                    text: entry.text,
                    provider_response_id: id(30 + position),
                  }
                : {
                    type: entry.role === "user" ? "user_message" : "system_message",
                    text: entry.text,
                  };
            break;
          case "silent":
            item = { type: "reasoning", summary: [entry.text], provider_item_id: id(35) };
            break;
          case "call":
            callSlots.set(entry.slot, { name: entry.name, mechanism: entry.mechanism });
            item = {
              type: "tool_call",
              call_id: callId(entry.slot),
              name: entry.name,
              arguments: entry.args,
              execution_mechanism: entry.mechanism,
            };
            break;
          case "result": {
            const call = callSlots.get(entry.slot) ?? {
              name: "f",
              mechanism: "local_dynamic" as const,
            };
            item = {
              type: "tool_result",
              call_id: callId(entry.slot),
              name: call.name,
              output: entry.output,
              is_error: false,
              execution_mechanism: call.mechanism,
            };
            break;
          }
          case "command":
            item = {
              type: "command_execution",
              call_id: callId(entry.slot),
              command: ["run", entry.output],
              status: entry.done ? "completed" : "in_progress",
              output: entry.output,
              exit_code: entry.done ? 0 : null,
              execution_mechanism: "local_dynamic",
            };
            break;
        }
        rows.push({
          turn_id: turnId,
          position,
          revision: 1,
          item_key: `${id(position)}-${position}`,
          item,
        });
      });
    });
    return {
      rows,
      jobId: `ID-${jobId}`,
      identities: [...new Set([...ids.map((u) => `ID-${u}`), `ID-${jobId}`])],
    };
  });

/** For each tool message: the (message, call) it answers, by the latest earlier call with its
 *  id in the same turn, or null for an orphan. */
function pairings(view: { messages: readonly ChatMLMessage[] }, spans: readonly number[]) {
  const out: (string | null)[] = [];
  let start = 0;
  for (const count of spans) {
    const latest = new Map<string, string>();
    view.messages.slice(start, start + count).forEach((message, offset) => {
      if (message.role === "assistant") {
        (message.tool_calls ?? []).forEach((call, callIndex) =>
          latest.set(call.id, `${start + offset}:${callIndex}`),
        );
      } else if (message.role === "tool") {
        out.push(latest.get(message.tool_call_id) ?? null);
      }
    });
    start += count;
  }
  return out;
}

const spansOf = (chatml: ChatMLTrajectory) => chatml.turns.map((turn) => turn.message_count);

describe("projection properties", () => {
  it("B12 never loses a call/result pairing", () => {
    fc.assert(
      fc.property(trajectory, ({ rows }) => {
        const chatml = projectTrajectoryToChatML(rows);
        const visible = modelVisibleTrajectory(chatml);
        const before = pairings(chatml, spansOf(chatml));
        expect(pairings(visible, spansOf(chatml))).toEqual(before);
        // Every result whose call came earlier in its turn is paired in ChatML too.
        let answered = 0;
        const seen = new Map<string, number>();
        for (const row of rows) {
          const key = (callId: string) => `${row.turn_id} ${callId}`;
          if (row.item.type === "tool_call" || row.item.type === "command_execution") {
            seen.set(key(row.item.call_id), 1);
          }
          if (row.item.type === "tool_result" && seen.has(key(row.item.call_id))) answered++;
          if (row.item.type === "command_execution" && row.item.status !== "in_progress")
            answered++;
        }
        expect(before.filter((pair) => pair !== null)).toHaveLength(answered);
      }),
      { numRuns: 300 },
    );
  });

  it("B12 never leaks a stored id and numbers aliases call_1, call_2 … within each turn, in order of appearance", () => {
    fc.assert(
      fc.property(trajectory, ({ rows, identities }) => {
        const chatml = projectTrajectoryToChatML(rows);
        const visible = modelVisibleTrajectory(chatml);
        const bytes = modelVisibleJson(visible);
        for (const identity of identities) expect(bytes).not.toContain(identity);
        for (const row of rows) expect(bytes).not.toContain(row.turn_id);
        let start = 0;
        for (const count of spansOf(chatml)) {
          // Aliases in order of first appearance (calls, and results of no earlier call).
          const calls: string[] = [];
          for (const message of visible.messages.slice(start, start + count)) {
            if (message.role === "assistant") {
              for (const call of message.tool_calls ?? []) calls.push(call.id);
            } else if (message.role === "tool" && !calls.includes(message.tool_call_id)) {
              calls.push(message.tool_call_id);
            }
          }
          expect(calls).toEqual(calls.map((_, index) => `call_${index + 1}`));
          start += count;
        }
      }),
      { numRuns: 300 },
    );
  });

  it("B12 is stable: same rows in any order give the same bytes", () => {
    fc.assert(
      fc.property(trajectory, fc.integer(), ({ rows }, seed) => {
        const turnOrder = [...new Set(rows.map((row) => row.turn_id))];
        const shuffled = [...rows].sort(
          (a, b) => ((a.position * 7919 + seed) % 13) - ((b.position * 7919 + seed) % 13),
        );
        const first = modelVisibleJson(modelVisibleTrajectory(projectTrajectoryToChatML(rows)));
        const second = modelVisibleJson(
          modelVisibleTrajectory(projectTrajectoryToChatML(shuffled, { turnOrder })),
        );
        expect(second).toBe(first);
        const copy = JSON.parse(JSON.stringify(rows)) as StoredTurnItem[];
        expect(modelVisibleJson(modelVisibleTrajectory(projectTrajectoryToChatML(copy)))).toBe(
          first,
        );
      }),
      { numRuns: 200 },
    );
  });

  it("B12 shuffled multi-turn rows give the same bytes without a turn order (issue 19)", () => {
    fc.assert(
      fc.property(
        trajectory.filter(({ rows }) => new Set(rows.map((row) => row.turn_id)).size > 1),
        fc.infiniteStream(fc.nat()),
        ({ rows }, randomness) => {
          // A Fisher–Yates shuffle of every row, across turns.
          const shuffled = [...rows];
          const draws = randomness[Symbol.iterator]();
          for (let index = shuffled.length - 1; index > 0; index--) {
            const other = (draws.next().value as number) % (index + 1);
            [shuffled[index], shuffled[other]] = [
              shuffled[other] as StoredTurnItem,
              shuffled[index] as StoredTurnItem,
            ];
          }
          const chatml = projectTrajectoryToChatML(shuffled);
          expect(chatml).toEqual(projectTrajectoryToChatML(rows));
          expect(modelVisibleJson(modelVisibleTrajectory(chatml))).toBe(
            modelVisibleJson(modelVisibleTrajectory(projectTrajectoryToChatML(rows))),
          );
          // Turns in the order they were made, whatever order the rows came in.
          expect(chatml.turns.map((turn) => turn.turn_id)).toEqual([
            ...new Set(rows.map((row) => row.turn_id)),
          ]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("B12 the turns of a real Codex rollout (UUIDv7 turn ids) come in the order they ran, whatever the row order", () => {
    const rollout = readFileSync(
      new URL(
        "../../../../test/fixtures/interop/codex/0.104-sanitized/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
        import.meta.url,
      ),
      "utf8",
    );
    const turnIds = [
      ...new Set(
        [...rollout.matchAll(/"turn_id":"([0-9a-f-]+)"/g)].map((match) => match[1] as string),
      ),
    ];
    expect(turnIds.length).toBeGreaterThan(10);
    const rows: StoredTurnItem[] = turnIds.flatMap((turnId, index) =>
      [0, 1].map((position) => ({
        turn_id: turnId,
        position,
        revision: 1,
        item_key: `k${index}-${position}`,
        item:
          position === 0
            ? { type: "user_message" as const, text: `turn ${index}` }
            : { type: "agent_message" as const, text: `answer ${index}` },
      })),
    );
    const expected = projectTrajectoryToChatML(rows, { turnOrder: turnIds });
    for (const order of [
      [...rows].reverse(),
      rows.filter((_, index) => index % 2 === 1).concat(rows.filter((_, index) => index % 2 === 0)),
    ]) {
      expect(projectTrajectoryToChatML(order)).toEqual(expected);
    }
  });

  it("B12 numbered turn ids keep their number order and store ids their creation order, whatever the row order", () => {
    const turnIds = ["turn-1", "turn-2", "turn-9", "turn-10", "turn-11"];
    const storeIds = ["jt_01hzzzzzzz0000", "jt_01j0000000zzzz", "jt_01j0000001aaaa"];
    for (const ids of [turnIds, storeIds]) {
      const rows: StoredTurnItem[] = ids.map((turnId, index) => ({
        turn_id: turnId,
        position: 0,
        revision: 1,
        item_key: `k${index}`,
        item: { type: "user_message", text: `message ${index}` },
      }));
      const expected = ids.map((_, index) => `message ${index}`);
      for (const order of [rows, [...rows].reverse()]) {
        const { messages } = projectTrajectoryToChatML(order);
        expect(messages.map((message) => message.content)).toEqual(expected);
      }
    }
  });

  it("B12 paging fits any reachable limit, cuts only content, to prefixes, and says so", () => {
    fc.assert(
      fc.property(trajectory, fc.double({ min: 0, max: 1, noNaN: true }), ({ rows }, fraction) => {
        const visible = modelVisibleTrajectory(projectTrajectoryToChatML(rows));
        const full = pageByteLength(visible);
        let floor: number;
        try {
          floor = pageByteLength(fitPageToLimit(visible, { limitBytes: 0 }));
        } catch (error) {
          floor = Number(/takes (\d+) bytes/.exec(String(error))?.[1]);
        }
        const limit = Math.floor(floor + (full - floor) * fraction);
        const page = fitPageToLimit(visible, { limitBytes: limit });
        expect(pageByteLength(page)).toBeLessThanOrEqual(limit);
        expect(page.messages.map((message) => message.role)).toEqual(
          visible.messages.map((message) => message.role),
        );
        const cut = JSON.stringify(page) !== JSON.stringify(visible);
        expect(page.metadata.content_truncated).toBe(cut);
        page.messages.forEach((message, index) => {
          const original = visible.messages[index];
          if (typeof message.content === "string" && typeof original?.content === "string") {
            expect(original.content.startsWith(message.content)).toBe(true);
            if (message.content.length > 0) {
              const last = message.content.charCodeAt(message.content.length - 1);
              const next = original.content.charCodeAt(message.content.length);
              expect(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(
                false,
              );
            }
          }
        });
      }),
      { numRuns: 200 },
    );
  });
});
