/**
 * Issue 18, privacy of recorded calls: with redaction on, both raw bodies pass through the
 * trajectory sanitizer's rules before they are stored (a compressed answer is decoded first);
 * off (the default), the bytes are kept exactly. With it on, the chain's gateway messages are
 * written from the sanitized bodies too. Credential headers are never stored.
 */
import { recordedCallRows } from "../support/recorded-calls.js";
import { gzipSync } from "node:zlib";
import { expect, it } from "vitest";
import { RecordedCalls } from "../../packages/server/src/gateway/recording/calls.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";

const SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";

describeEachDialect("recorded call redaction", (getDatabase) => {
  async function recordWith(redact: boolean) {
    const subject = uniqueName("subject");
    const messages = [{ role: "user", content: `my key is ${SECRET}` }];
    const answer = JSON.stringify({
      content: [{ type: "text", text: `echo ${SECRET}` }],
      usage: { input_tokens: 3, output_tokens: 4 },
    });
    await new RecordedCalls(getDatabase(), { redact }).record({
      subjectUid: subject,
      format: "anthropic-messages",
      path: "/v1/messages",
      model: "m",
      messages,
      requestHeaders: {
        "x-api-key": "vbk_gateway",
        authorization: "Bearer vbk_gateway",
        "x-app": "cli",
      },
      requestBody: Buffer.from(JSON.stringify({ model: "m", messages })),
      statusCode: 200,
      responseHeaders: { "content-type": "application/json", "content-encoding": "gzip" },
      responseBody: gzipSync(answer),
      durationMs: 1,
    });
    const [row] = await recordedCallRows(getDatabase(), subject);
    if (row === undefined) throw new Error("the call was not kept");
    return row;
  }

  it("keeps the exact bytes by default and never the credential headers", async () => {
    const row = await recordWith(false);
    expect(row.requestText).toContain(SECRET);
    expect(row.redacted).toBe(0);
    expect(row.output_tokens).toBe(4); // read from the decoded answer
    expect(row.request_headers).not.toContain("vbk_gateway");
    expect(JSON.parse(row.request_headers)).toEqual({ "x-app": "cli" });
    expect(JSON.parse(row.response_headers)["content-encoding"]).toBe("gzip");
  });

  it("runs both bodies through the sanitizer when redaction is on", async () => {
    const row = await recordWith(true);
    expect(row.redacted).toBe(1);
    expect(row.requestText).not.toContain(SECRET);
    expect(row.requestText).toContain("[redacted:");
    const response = row.response.toString("utf8");
    expect(response).not.toContain(SECRET);
    expect(response).toContain("[redacted:");
    // Stored decoded: the headers no longer claim a content coding.
    expect(JSON.parse(row.response_headers)["content-encoding"]).toBeUndefined();
    expect(row.request_headers).not.toContain("vbk_gateway");
    // The chain's gateway messages are written from the stored bodies: no secret there either.
    const messages = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("content")
      .where("subject_uid", "=", row.subject_uid)
      .execute();
    expect(messages).toHaveLength(2);
    for (const message of messages) {
      expect(JSON.stringify(message.content)).not.toContain(SECRET);
      expect(JSON.stringify(message.content)).toContain("[redacted:");
    }
  });
});
