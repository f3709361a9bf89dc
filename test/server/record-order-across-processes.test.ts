/**
 * Issue 34 item 3: recorded calls of one subject kept by different server processes on one
 * database are placed in the order they were kept, each once (docs/server/recorded-calls.md,
 * "What is written when"). Two recorders on one database stand for two processes; the first
 * one's placing is held back (it is kept busy), so the session's next call, kept by the
 * other, finds the first unplaced: it places the first, then its own after it, and the first
 * process finds its call placed. A call a process kept and never placed is placed by another
 * process's look for leftovers once it is old enough, not before. SQLite and PostgreSQL.
 */
import { expect, it } from "vitest";
import { RecordedCalls } from "../../packages/server/src/gateway/recording/calls.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { anthropicCallToRecord as call, recordedCallRows } from "../support/recorded-calls.js";
import { until } from "../support/until.js";

const first = [{ role: "user", content: "Q1" }];
const second = [...first, { role: "assistant", content: "A1" }, { role: "user", content: "Q2" }];

describeEachDialect("recorded calls kept by two processes", (getDatabase) => {
  it("issue 34 item 3: the next call, kept by another process, places the earlier call first, then itself; each once", async () => {
    const subject = uniqueName("order");
    // A process whose placing waits (a call of its is being answered) for up to a minute.
    const slow = new RecordedCalls(getDatabase(), { placeWithinMs: 60_000 });
    const other = new RecordedCalls(getDatabase());
    const answering = slow.busy();
    try {
      const kept = await slow.keep(call(subject, first, "A1"));
      const next = await other.record(call(subject, second, "A2"));
      const rows = await recordedCallRows(getDatabase(), subject);
      expect(rows.map((row) => row.id)).toEqual([kept.callId, next.callId]);
      expect(rows[0]?.conversation_id).toBe(next.conversationId);
      expect(next).toMatchObject({ matchedCount: 1, previousCallId: kept.callId });
      answering();
      // The first process finds its call placed by the other.
      expect(await kept.placed).toMatchObject({
        callId: kept.callId,
        conversationId: next.conversationId,
        previousCallId: null,
      });
      // Each message once: Q1 A1 Q2 A2.
      const messages = await getDatabase()
        .db.selectFrom("ai_gateway_messages")
        .select("id")
        .where("subject_uid", "=", subject)
        .execute();
      expect(messages).toHaveLength(4);
    } finally {
      answering();
      await slow.close();
      await other.close();
    }
  });

  it("issue 34 item 3: a call a process kept and never placed is placed by another's look for leftovers once it is old enough", async () => {
    const subject = uniqueName("left");
    const died = new RecordedCalls(getDatabase(), { placeWithinMs: 60_000 });
    const answering = died.busy();
    const survivor = new RecordedCalls(getDatabase(), { leftoverAfterMs: 300 });
    try {
      const kept = await died.keep(call(subject, first, "A1"));
      // At start it places every unplaced call; the next comes after that placing.
      await survivor.placeLeftovers();
      const placed = async () =>
        (await recordedCallRows(getDatabase(), subject)).every((row) => row.conversation_id !== "");
      await until(placed, 10_000, 10);
      const keptAt = Date.now();
      const later = await died.keep(call(subject, second, "A2"));
      await until(placed, 10_000, 10);
      // Not before it was a lease old (300 ms from its keep), within a look (every 100 ms) after.
      expect(Date.now() - keptAt).toBeGreaterThanOrEqual(250);
      const rows = await recordedCallRows(getDatabase(), subject);
      expect(rows.map((row) => [row.id, row.previous_call_id])).toEqual([
        [kept.callId, null],
        [later.callId, kept.callId],
      ]);
      answering();
      await Promise.all([kept.placed, later.placed]);
    } finally {
      answering();
      await died.close();
      await survivor.close();
    }
  });

  it("issue 34 item 3: calls are placed in the order they were kept, not by the clocks of their servers (PostgreSQL)", async () => {
    // SQLite is one host: one clock, and the calls are placed in its time order.
    if (getDatabase().capabilities.dialect !== "postgres") return;
    const subject = uniqueName("skew");
    const ahead = new RecordedCalls(getDatabase(), { placeWithinMs: 60_000 });
    const other = new RecordedCalls(getDatabase());
    const answering = ahead.busy();
    try {
      const kept = await ahead.keep(call(subject, first, "A1"));
      // Its server's clock runs a minute ahead of the other's.
      const later = new Date(Date.now() + 60_000).toISOString();
      await getDatabase()
        .db.updateTable("ai_gateway_recorded_calls")
        .set({ created_at: later })
        .where("id", "=", kept.callId)
        .execute();
      const next = await other.record(call(subject, second, "A2"));
      expect(next).toMatchObject({ matchedCount: 1, previousCallId: kept.callId });
      const rows = await recordedCallRows(getDatabase(), subject);
      expect(new Set(rows.map((row) => row.conversation_id))).toEqual(
        new Set([next.conversationId]),
      );
      answering();
      await kept.placed;
    } finally {
      answering();
      await ahead.close();
      await other.close();
    }
  });
});
