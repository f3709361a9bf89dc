/**
 * Issue 31, item 5: the lookup of a recorded call's previous call (the subject's latest call
 * whose last prefix the new call begins with) is one statement per thousand prefixes: for a
 * request of many new messages it was hundreds of statements inside the last placing
 * transaction, holding a SQLite server's thread for a third of a second. It now runs outside
 * the transactions and lets the caller yield between two statements. SQLite and PostgreSQL.
 */
import { expect, it } from "vitest";
import {
  findPreviousCall,
  insertRecordedCall,
} from "../../packages/server/src/store/repositories/recorded-calls.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";

const hashOf = (index: number): string => index.toString(16).padStart(64, "0");

describeEachDialect("the previous call of a long request (issue 31)", (getDatabase) => {
  it("issue 31: finds the deepest earlier tip among 5,000 prefixes, yielding between its statements", async () => {
    const db = getDatabase().db;
    const subject = uniqueName("subject");
    const row = (id: string, tip: number, messageCount: number) => ({
      id,
      subject_uid: subject,
      conversation_id: "conv_x",
      wire_format: "anthropic-messages",
      path: "/v1/messages",
      model: "m",
      tip_prefix_sha256: hashOf(tip),
      message_count: messageCount,
      matched_count: 0,
      previous_call_id: null,
      status_code: 200,
      request_headers: "{}",
      request_body: "{}",
      response_headers: "{}",
      response_body_base64: "",
      redacted: 0,
      input_tokens: null,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      duration_ms: 1,
      created_at: new Date().toISOString(),
    });
    // Two earlier calls whose tips are early prefixes of the long request.
    await insertRecordedCall(db, row(uniqueName("call"), 10, 11));
    const deeper = uniqueName("call");
    await insertRecordedCall(db, row(deeper, 20, 21));
    const hashes = Array.from({ length: 5_000 }, (_, index) => hashOf(index));
    let pauses = 0;
    const found = await findPreviousCall(db, subject, hashes, async () => {
      pauses++;
    });
    expect(found).toEqual({ id: deeper, message_count: 21 });
    // From the end: 8, 64, 512, then 1,000 at a time: the yields come between them.
    expect(pauses).toBeGreaterThanOrEqual(5);
    expect(await findPreviousCall(db, uniqueName("other"), hashes)).toBeUndefined();
  });
});
