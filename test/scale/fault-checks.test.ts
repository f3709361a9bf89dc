/**
 * The fault test's checks (bench/scale/fault/checks.ts) on rows made by hand: a lost, a doubled
 * or a misplaced write is reported, so a passing run of test/scale/fault.test.ts means what it
 * says. No database needed.
 */
import { describe, expect, it } from "vitest";
import {
  checkEnded,
  checkRecordedCalls,
  checkResponses,
  type CallRow,
  type MessageRow,
} from "../../bench/scale/fault/checks.js";
import type { Ledger } from "../../bench/scale/fault/workloads.js";

const message = (row: Partial<MessageRow> & Pick<MessageRow, "id" | "role">): MessageRow => ({
  conversation_id: "conv_1",
  previous_message_id: null,
  status: "completed",
  content: "[]",
  metadata: "{}",
  depth: 0,
  ...row,
});
const attempt = (id: string) => JSON.stringify({ caller: { fault_attempt: id } });

describe("issue 34 item 5: the fault test's checks", () => {
  const ledger: Ledger = {
    responses: [
      {
        session: "s",
        turn: 1,
        operation: "s-t1",
        attemptId: "s-t1.a1",
        id: "msg_a1",
        previousId: undefined,
        streamed: false,
      },
      {
        session: "s",
        turn: 2,
        operation: "s-t2",
        attemptId: "s-t2.a2",
        id: "msg_a2",
        previousId: "msg_a1",
        streamed: true,
      },
    ],
    calls: [
      {
        subject: "x",
        session: "c",
        turn: 1,
        operation: "c-t1",
        attemptId: "c-t1.a1",
        streamed: false,
      },
      {
        subject: "x",
        session: "c",
        turn: 2,
        operation: "c-t2",
        attemptId: "c-t2.a1",
        streamed: false,
      },
    ],
    jobs: [],
    items: [],
  };
  const responses = [
    message({ id: "msg_u1", role: "user", metadata: attempt("s-t1.a1") }),
    message({
      id: "msg_a1",
      role: "assistant",
      previous_message_id: "msg_u1",
      metadata: attempt("s-t1.a1"),
    }),
    // A lost first attempt of turn 2, ended by a lease, then the acknowledged one.
    message({
      id: "msg_u2x",
      role: "user",
      previous_message_id: "msg_a1",
      metadata: attempt("s-t2.a1"),
    }),
    message({
      id: "msg_a2x",
      role: "assistant",
      status: "incomplete",
      previous_message_id: "msg_u2x",
      metadata: attempt("s-t2.a1"),
    }),
    message({
      id: "msg_u2",
      role: "user",
      previous_message_id: "msg_a1",
      metadata: attempt("s-t2.a2"),
    }),
    message({
      id: "msg_a2",
      role: "assistant",
      previous_message_id: "msg_u2",
      metadata: attempt("s-t2.a2"),
    }),
  ];

  it("issue 34 item 5: responses stored once and chained pass; a doubled input, a lost answer or a wrong anchor fail", () => {
    expect(checkResponses(ledger, responses)).toMatchObject({ passed: true, problemCount: 0 });
    const doubled = [
      ...responses,
      message({ id: "msg_u2b", role: "user", metadata: attempt("s-t2.a2") }),
    ];
    expect(checkResponses(ledger, doubled).passed).toBe(false);
    expect(
      checkResponses(
        ledger,
        responses.filter((row) => row.id !== "msg_a2"),
      ).passed,
    ).toBe(false);
    const elsewhere = responses.map((row) =>
      row.id === "msg_u2" ? { ...row, previous_message_id: "msg_a2x" } : row,
    );
    expect(checkResponses(ledger, elsewhere).problems).toEqual([
      "the input of msg_a2 follows msg_a2x, not msg_a1",
    ]);
  });

  it("issue 34 item 5: a response left in_progress fails", () => {
    expect(checkEnded(responses).passed).toBe(true);
    const left = responses.map((row) =>
      row.id === "msg_a2x" ? { ...row, status: "in_progress" } : row,
    );
    expect(checkEnded(left).problems).toEqual(["msg_a2x is still in_progress"]);
  });

  const call = (
    id: string,
    attemptId: string,
    previous: string | null,
    count: number,
  ): CallRow => ({
    id,
    conversation_id: "conv_c",
    previous_call_id: previous,
    message_count: count,
    attemptId,
    operation: attemptId.replace(/\.a\d+$/, ""),
  });
  const text = (value: string) => JSON.stringify([{ type: "text", text: value }]);
  const chain = [
    message({ id: "m1", conversation_id: "conv_c", role: "user", content: text("c-t1: go on") }),
    message({
      id: "m2",
      conversation_id: "conv_c",
      role: "assistant",
      depth: 1,
      previous_message_id: "m1",
      content: text("You said: c-t1: go on"),
    }),
    message({
      id: "m3",
      conversation_id: "conv_c",
      role: "user",
      depth: 2,
      previous_message_id: "m2",
      content: text("c-t2: go on"),
    }),
    message({
      id: "m4",
      conversation_id: "conv_c",
      role: "assistant",
      depth: 3,
      previous_message_id: "m3",
      content: text("You said: c-t2: go on"),
    }),
  ];
  const calls = [call("call_1", "c-t1.a1", null, 1), call("call_2", "c-t2.a1", "call_1", 3)];

  it("issue 34 item 5: recorded calls placed once in order pass; a doubled message, an unplaced call or a call out of order fail", () => {
    const passing = checkRecordedCalls(ledger, calls, chain);
    expect(passing.stored.passed && passing.placed.passed).toBe(true);
    const doubled = [...chain, { ...chain[2]!, id: "m3b" }];
    expect(checkRecordedCalls(ledger, calls, doubled).placed.passed).toBe(false);
    const unplaced = calls.map((row) =>
      row.id === "call_2" ? { ...row, conversation_id: "" } : row,
    );
    expect(checkRecordedCalls(ledger, unplaced, chain).placed.passed).toBe(false);
    const unordered = [call("call_1", "c-t1.a1", "call_2", 1), call("call_2", "c-t2.a1", null, 3)];
    expect(checkRecordedCalls(ledger, unordered, chain).placed.problemCount).toBe(2);
    expect(checkRecordedCalls(ledger, [calls[0]!], chain).stored.problems).toEqual([
      "c-t2: 0 recorded calls of attempt c-t2.a1",
    ]);
  });
});
