/**
 * Issue 18, recorded calls and what the caller deleted (DELETE on the Conversations and
 * Responses routes): a deleted chain is never continued. A deleted conversation: the session's
 * next call starts a new conversation, which its later calls (and forks inside the old prefix)
 * continue, and the deleted one is left as it was. A deleted answer or item where the match
 * ends: the call forks before it in the same conversation, and the session's next calls
 * continue the fork. Through the HTTP routes, on SQLite and PostgreSQL; the call's bytes are
 * committed by the time the client has its answer.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { startRawUpstreamServer, type RawUpstreamServer } from "../support/raw-upstream-server.js";

interface Item {
  readonly id: string;
  readonly type: string;
  readonly role?: string;
  readonly content?: { readonly text: string }[];
}

const ANSWER = { role: "assistant", content: [{ type: "text", text: "stub answer" }] };
const user = (text: string) => ({ role: "user", content: text });
/** The items of Q1, Q2, Q3 and their answers. */
const THREE_TURNS = ["Q1", "Q2", "Q3"].flatMap((text) => [`user:${text}`, "assistant:stub answer"]);

describeEachDialect("recorded calls and caller deletions", (getDatabase) => {
  let started: RawUpstreamServer;

  beforeAll(async () => {
    started = await startRawUpstreamServer(getDatabase());
  });
  afterAll(async () => {
    await started.close();
  });

  async function session() {
    const subject = uniqueName("subject");
    const { key } = await started.server.apiKeyFor(subject);
    const request = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${started.baseUrl}${path}`, {
        method,
        headers: {
          "x-api-key": key,
          "anthropic-version": "2023-06-01",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    /** One recorded call; resolves to its conversation once it is placed. */
    const send = async (messages: unknown[]): Promise<string> => {
      const response = await request("POST", "/v1/messages", {
        model: "claude-test",
        max_tokens: 50,
        messages,
      });
      expect(response.status).toBe(200);
      // The call's bytes are committed when the client has its answer.
      const kept = (await recordedCallRows(getDatabase(), subject)).filter(
        (row) =>
          row.requestText === JSON.stringify({ model: "claude-test", max_tokens: 50, messages }),
      );
      expect(kept).toHaveLength(1);
      await callsPlaced(getDatabase(), subject);
      const row = await getDatabase()
        .db.selectFrom("ai_gateway_recorded_calls")
        .select("conversation_id")
        .where("id", "=", kept[0]?.id as string)
        .executeTakeFirstOrThrow();
      return row.conversation_id;
    };
    const items = async (conversationId: string): Promise<Item[]> => {
      const response = await request("GET", `/v1/conversations/${conversationId}/items?order=asc`);
      expect(response.status).toBe(200);
      return response.body.data as Item[];
    };
    const texts = (list: Item[]) =>
      list.map((item) => `${item.role}:${item.content?.map((part) => part.text).join("")}`);
    return { subject, request, send, items, texts };
  }

  it("a deleted conversation is not continued: the next call starts a new one, which the session's later calls and forks continue", async () => {
    const { request, send, items, texts } = await session();
    const old = await send([user("Q1")]);
    expect((await request("DELETE", `/v1/conversations/${old}`)).status).toBe(200);
    const renewed = await send([user("Q1"), ANSWER, user("Q2")]);
    expect(renewed).not.toBe(old);
    expect(await send([user("Q1"), ANSWER, user("Q2"), ANSWER, user("Q3")])).toBe(renewed);
    expect(texts(await items(renewed))).toEqual(THREE_TURNS);
    // A fork inside the old prefix forks the new conversation.
    expect(await send([user("Q1"), ANSWER, user("Q2 again")])).toBe(renewed);
    // The deleted one is left as it was (the operator still reads it; the caller does not).
    expect((await request("GET", `/v1/conversations/${old}`)).status).toBe(404);
    const left = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("id")
      .where("conversation_id", "=", old)
      .execute();
    expect(left).toHaveLength(2);
  });

  it("a deleted answer is not given back: the call forks before it, and the session's next call continues the fork", async () => {
    const { request, send, items, texts } = await session();
    const conversation = await send([user("Q1")]);
    const [, answer] = await items(conversation);
    expect(answer?.role).toBe("assistant");
    expect((await request("DELETE", `/v1/responses/${answer?.id}`)).status).toBe(200);
    expect(await send([user("Q1"), ANSWER, user("Q2")])).toBe(conversation);
    const forked = await items(conversation);
    expect(texts(forked)).toEqual([
      "user:Q1",
      "assistant:stub answer",
      "user:Q2",
      "assistant:stub answer",
    ]);
    expect(forked.map((item) => item.id)).not.toContain(answer?.id);
    expect(await send([user("Q1"), ANSWER, user("Q2"), ANSWER, user("Q3")])).toBe(conversation);
    const next = await items(conversation);
    expect(next).toHaveLength(6);
    expect(next.slice(0, 4).map((item) => item.id)).toEqual(forked.map((item) => item.id));
  });

  it("a deleted message where the match ends is not continued: the call forks before it and writes it again", async () => {
    const { subject, request, send, items, texts } = await session();
    const conversation = await send([user("Q1"), ANSWER, user("Q2")]);
    const before = await items(conversation);
    const question = before[2];
    expect(texts([question as Item])).toEqual(["user:Q2"]);
    const deleted = await request(
      "DELETE",
      `/v1/conversations/${conversation}/items/${question?.id}`,
    );
    expect(deleted.status).toBe(200);
    expect(await send([user("Q1"), ANSWER, user("Q2"), ANSWER, user("Q3")])).toBe(conversation);
    const after = await items(conversation);
    expect(texts(after)).toEqual(THREE_TURNS);
    expect(after.map((item) => item.id)).not.toContain(question?.id);
    expect(after.slice(0, 2).map((item) => item.id)).toEqual(
      before.slice(0, 2).map((item) => item.id),
    );
    // The session's next call continues the fork (its whole history is stored).
    await send([user("Q1"), ANSWER, user("Q2"), ANSWER, user("Q3"), ANSWER, user("Q4")]);
    const last = await getDatabase()
      .db.selectFrom("ai_gateway_recorded_calls")
      .select(["matched_count"])
      .where("subject_uid", "=", subject)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    expect(last.matched_count).toBe(5);
  });
});
