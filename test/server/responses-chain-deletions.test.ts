/**
 * Issue 18, `/v1/responses` without `previous_response_id` (a client that sends its whole
 * history) and what the caller deleted (DELETE on the Conversations and Responses routes),
 * by the same rules as recorded calls (record-deletions.test.ts): a deleted conversation is
 * not continued (a new one takes over); a deleted answer the client gives back, or a deleted
 * item where the match ends, is not continued either: the request forks before it in the same
 * conversation, writes it again, and the session's next request continues the fork. With the
 * `openai` SDK and fetch against a stub model, on SQLite and PostgreSQL.
 */
import type OpenAI from "openai";
import { expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { stubbedOpenAIClient } from "../support/responses-stubs.js";

interface Item {
  readonly id: string;
  readonly role?: string;
  readonly content?: { readonly text?: string }[];
}

type Input = OpenAI.Responses.ResponseInputItem;

describeEachDialect("/v1/responses chains and caller deletions", (getDatabase) => {
  const { stubbed, client } = stubbedOpenAIClient(getDatabase);

  /** One request of a session; the stub answers `answer`. Resolves to the response. */
  async function send(input: Input[], answer: string): Promise<OpenAI.Responses.Response> {
    stubbed().stubs["openai-responses"].script.push({ text: answer });
    return client().responses.create({ model: "gpt-chain", input });
  }

  async function conversationOf(responseId: string): Promise<string> {
    const row = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("conversation_id")
      .where("id", "=", responseId)
      .executeTakeFirstOrThrow();
    return row.conversation_id;
  }

  async function items(conversationId: string): Promise<Item[]> {
    const listed = await stubbed().get(`/conversations/${conversationId}/items?order=asc&limit=50`);
    expect(listed.status).toBe(200);
    return listed.body.data as Item[];
  }

  const texts = (list: readonly Item[]) =>
    list.map((item) => `${item.role}:${item.content?.map((part) => part.text).join("")}`);

  async function remove(path: string): Promise<void> {
    const response = await fetch(`${stubbed().baseUrl}${path}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${stubbed().key}` },
    });
    expect(response.status).toBe(200);
  }

  const user = (text: string): Input => ({ role: "user", content: text });
  const assistant = (text: string): Input => ({ role: "assistant", content: text });

  it("a deleted conversation is not continued: the next request starts a new one, which the session's next request continues", async () => {
    const q = uniqueName("q");
    const first = await send([user(`${q} 1`)], "A1");
    const old = await conversationOf(first.id);
    await remove(`/conversations/${old}`);
    const history = [user(`${q} 1`), assistant("A1"), user(`${q} 2`)];
    const second = await send(history, "A2");
    const renewed = await conversationOf(second.id);
    expect(renewed).not.toBe(old);
    const third = await send([...history, assistant("A2"), user(`${q} 3`)], "A3");
    expect(await conversationOf(third.id)).toBe(renewed);
    expect(texts(await items(renewed))).toEqual([
      `user:${q} 1`,
      "assistant:A1",
      `user:${q} 2`,
      "assistant:A2",
      `user:${q} 3`,
      "assistant:A3",
    ]);
  });

  it("a deleted answer the client gives back is not continued: the request forks before it, and the session's next request continues the fork", async () => {
    const q = uniqueName("q");
    const first = await send([user(`${q} 1`)], "A1");
    const conversation = await conversationOf(first.id);
    await remove(`/responses/${first.id}`);
    const history = [user(`${q} 1`), assistant("A1"), user(`${q} 2`)];
    const second = await send(history, "A2");
    expect(await conversationOf(second.id)).toBe(conversation);
    const forked = await items(conversation);
    expect(texts(forked)).toEqual([`user:${q} 1`, "assistant:A1", `user:${q} 2`, "assistant:A2"]);
    expect(forked.map((item) => item.id)).not.toContain(first.id);
    const third = await send([...history, assistant("A2"), user(`${q} 3`)], "A3");
    expect(await conversationOf(third.id)).toBe(conversation);
    const next = await items(conversation);
    expect(next).toHaveLength(6);
    expect(next.slice(0, 4).map((item) => item.id)).toEqual(forked.map((item) => item.id));
  });

  it("a deleted item where the match ends is not continued: the request forks before it and writes it again", async () => {
    const q = uniqueName("q");
    const history = [user(`${q} 1`), assistant("A0"), user(`${q} 2`)];
    const first = await send(history, "A1");
    const conversation = await conversationOf(first.id);
    const before = await items(conversation);
    const question = before[2];
    expect(texts([question as Item])).toEqual([`user:${q} 2`]);
    await remove(`/conversations/${conversation}/items/${question?.id}`);
    // The client's history ends at the deleted item and goes on another way.
    const second = await send([...history, user(`${q} 3`)], "A3");
    expect(await conversationOf(second.id)).toBe(conversation);
    const after = await items(conversation);
    expect(texts(after)).toEqual([
      `user:${q} 1`,
      "assistant:A0",
      `user:${q} 2`,
      `user:${q} 3`,
      "assistant:A3",
    ]);
    expect(after.map((item) => item.id)).not.toContain(question?.id);
    expect(after.slice(0, 2).map((item) => item.id)).toEqual(
      before.slice(0, 2).map((item) => item.id),
    );
    // The session's next request continues the fork: nothing of it is written twice.
    const third = await send([...history, user(`${q} 3`), assistant("A3"), user(`${q} 4`)], "A4");
    const last = await items(await conversationOf(third.id));
    expect(last.slice(0, 5).map((item) => item.id)).toEqual(after.map((item) => item.id));
    expect(texts(last.slice(5))).toEqual([`user:${q} 4`, "assistant:A4"]);
  });
});
