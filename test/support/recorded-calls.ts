/**
 * Recorded calls are placed in their chains right after the client has its answer
 * (docs/server/recorded-calls.md, "Recorded calls"): their conversation, nodes and gateway messages are
 * written after the call's bytes (which are committed before the client has the answer's
 * end). A test that reads a chain after a call waits for this.
 */
import { BodyReader } from "../../packages/server/src/gateway/recording/bodies/body-reader.js";
import type { CallToRecord } from "../../packages/server/src/gateway/recording/calls.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";

/**
 * Resolves once every recorded call of the subject is placed and, when `calls` is given, the
 * subject has exactly that many recorded calls; throws after `timeoutMs`, naming what is missing.
 */
export async function callsPlaced(
  database: StoreDatabase,
  subjectUid: string,
  calls?: number,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await database.db
      .selectFrom("ai_gateway_recorded_calls")
      .select(["id", "conversation_id"])
      .where("subject_uid", "=", subjectUid)
      .execute();
    const unplaced = rows.find((row) => row.conversation_id === "");
    if (unplaced === undefined && (calls === undefined || rows.length === calls)) return;
    if (Date.now() > deadline) {
      throw new Error(
        unplaced === undefined
          ? `subject ${subjectUid} has ${rows.length} recorded calls, not ${calls}, after ${timeoutMs} ms`
          : `call ${unplaced.id} was not placed in ${timeoutMs} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * The subject's recorded call rows, whole, in the order they were kept, each with its bodies as
 * the store gives them back (`request`, `response`; the response still content-encoded).
 */
export async function recordedCallRows(database: StoreDatabase, subjectUid: string) {
  const rows = await database.db
    .selectFrom("ai_gateway_recorded_calls")
    .selectAll()
    .where("subject_uid", "=", subjectUid)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  const reader = new BodyReader(database.db);
  const out = [];
  for (const row of rows) {
    const request = await reader.request(row);
    out.push({
      ...row,
      request,
      requestText: request.toString("utf8"),
      response: await reader.response(row),
    });
  }
  return out;
}

/** An Anthropic Messages call to record whose upstream answered `text` (JSON, whole). */
export function anthropicCallToRecord(
  subjectUid: string,
  messages: unknown[],
  text: string,
): CallToRecord {
  return {
    subjectUid,
    format: "anthropic-messages",
    path: "/v1/messages",
    model: "claude-test",
    messages,
    requestHeaders: {},
    requestBody: Buffer.from(JSON.stringify({ model: "claude-test", messages })),
    statusCode: 200,
    responseHeaders: { "content-type": "application/json" },
    responseBody: Buffer.from(
      JSON.stringify({
        id: "msg_up",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [{ type: "text", text }],
        stop_reason: "end_turn",
        usage: { input_tokens: 7, output_tokens: 3 },
      }),
    ),
    durationMs: 1,
  };
}
