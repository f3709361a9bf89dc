/**
 * Clients that keep the history themselves and send all of it with every `/v1/responses`
 * request, without previous_response_id (issue 18): the `openai` SDK with `store: false` and
 * the AI SDK (`@ai-sdk/openai`'s Responses model, with `store: false` and with `store: true`,
 * whose next turn names the answers by item_reference). Each session is one chain: two and
 * three turns, a tool turn, a fork, a retry (also two at once) and two sessions at the same
 * time. The server runs on loopback; behind it is a stub model speaking the Anthropic wire
 * format (not Anthropic).
 */
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, type ModelMessage } from "ai";
import { sql } from "kysely";
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";

interface Row {
  readonly id: string;
  readonly conversation_id: string;
  readonly previous_message_id: string | null;
  readonly role: string;
  readonly content: string;
  readonly depth: number;
}

describeEachDialect("clients with their own history against /v1/responses", (getDatabase) => {
  let stubbed: StubbedServer;
  beforeAll(async () => {
    stubbed = await startStubbedServer(getDatabase());
  });
  afterAll(async () => {
    await stubbed.close();
  });

  /** A fresh subject and an `openai` client with its key. */
  async function session(): Promise<{ subject: string; client: OpenAI; key: string }> {
    const subject = uniqueName("history");
    const { key } = await stubbed.server.apiKeyFor(subject);
    return {
      subject,
      key,
      client: new OpenAI({ apiKey: key, baseURL: stubbed.baseUrl, maxRetries: 0 }),
    };
  }

  async function rowsOf(subject: string): Promise<Row[]> {
    const result = await sql<Row>`select id, conversation_id, previous_message_id, role,
      content, depth from ai_gateway_messages where subject_uid = ${subject}
      order by depth, created_at, id`.execute(getDatabase().db);
    return result.rows.map((row) => ({ ...row, depth: Number(row.depth) }));
  }

  /** One conversation whose messages each continue the one before: a single chain. */
  function expectOneChain(rows: readonly Row[], roles: readonly string[]): void {
    expect(new Set(rows.map((row) => row.conversation_id)).size).toBe(1);
    expect(rows.map((row) => row.role)).toEqual(roles);
    rows.forEach((row, index) => {
      expect(row.previous_message_id).toBe(index === 0 ? null : rows[index - 1]?.id);
    });
  }

  const anthropic = () => stubbed.stubs.anthropic;
  const sentMessages = () => stubbed.lastSent("anthropic").messages as unknown[];

  it("openai SDK, store: false, three turns: one chain, and the model saw the whole history", async () => {
    const { subject, client, key } = await session();
    anthropic().script.push({ text: "Noted: 7." }, { text: "You said 7." }, { text: "Bye." });
    let input: ResponseInputItem[] = [{ role: "user", content: "Remember 7." }];
    for (const next of ["What did I say?", "Goodbye."]) {
      const response = await client.responses.create({ model: "claude-h", input, store: false });
      input = [
        ...input,
        ...(response.output as ResponseInputItem[]),
        { role: "user", content: next },
      ];
    }
    const last = await client.responses.create({ model: "claude-h", input, store: false });
    expect(last.output_text).toBe("Bye.");
    expect(sentMessages()).toHaveLength(5);
    const rows = await rowsOf(subject);
    expectOneChain(rows, ["user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(rows[3]?.content).toContain("You said 7.");
    // Kept for the operator, still not the caller's to read.
    const read = await stubbed.get(`/responses/${last.id}`, key);
    expect(read.status).toBe(404);
  });

  it("openai SDK, a tool turn: the function call and its output continue the chain", async () => {
    const { subject, client } = await session();
    anthropic().script.push(
      { toolCalls: [{ id: "toolu_h1", name: "shell", arguments: '{"cmd":"ls"}' }] },
      { text: "Two files." },
    );
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: "function",
        name: "shell",
        parameters: { type: "object", properties: { cmd: { type: "string" } } },
        strict: false,
      },
    ];
    const input: ResponseInputItem[] = [
      { role: "developer", content: "You run commands." },
      { role: "user", content: "List the files." },
    ];
    const first = await client.responses.create({ model: "claude-h", input, tools, store: false });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toBeDefined();
    const second = await client.responses.create({
      model: "claude-h",
      input: [
        ...input,
        ...(first.output as ResponseInputItem[]),
        { type: "function_call_output", call_id: call?.call_id ?? "", output: "a b" },
      ],
      tools,
      store: false,
    });
    expect(second.output_text).toBe("Two files.");
    expectOneChain(await rowsOf(subject), ["user", "user", "assistant", "tool", "assistant"]);
  });

  it("a fork: a rewritten second question continues the first answer beside the old branch", async () => {
    const { subject, client } = await session();
    anthropic().script.push({ text: "A1" }, { text: "A2" }, { text: "A2 again" });
    const q1: ResponseInputItem = { role: "user", content: "Q1" };
    const first = await client.responses.create({ model: "claude-h", input: [q1], store: false });
    const history = [q1, ...(first.output as ResponseInputItem[])];
    await client.responses.create({
      model: "claude-h",
      input: [...history, { role: "user", content: "Q2" }],
      store: false,
    });
    await client.responses.create({
      model: "claude-h",
      input: [...history, { role: "user", content: "Q2, rewritten" }],
      store: false,
    });
    const rows = await rowsOf(subject);
    expect(new Set(rows.map((row) => row.conversation_id)).size).toBe(1);
    const answer1 = rows.find((row) => row.content.includes('"A1"'));
    const questions = rows.filter((row) => row.role === "user" && row.depth === 2);
    expect(questions).toHaveLength(2);
    for (const question of questions) expect(question.previous_message_id).toBe(answer1?.id);
    expect(rows.filter((row) => row.content.includes('"Q1"'))).toHaveLength(1);
  });

  it("a retry, also two at once: the question is stored once, each answer beside the other", async () => {
    const { subject, client } = await session();
    const input: ResponseInputItem[] = [{ role: "user", content: "Same question" }];
    await client.responses.create({ model: "claude-h", input, store: false });
    await Promise.all([
      client.responses.create({ model: "claude-h", input, store: false }),
      client.responses.create({ model: "claude-h", input, store: false }),
    ]);
    const rows = await rowsOf(subject);
    const questions = rows.filter((row) => row.role === "user");
    expect(questions).toHaveLength(1);
    const answers = rows.filter((row) => row.role === "assistant");
    expect(answers).toHaveLength(3);
    for (const answer of answers) expect(answer.previous_message_id).toBe(questions[0]?.id);
  });

  it("two sessions at the same time, two turns each: two chains", async () => {
    const { subject, client } = await session();
    const turn = async (name: string) => {
      const input: ResponseInputItem[] = [{ role: "user", content: `I am session ${name}` }];
      const first = await client.responses.create({ model: "claude-h", input, store: false });
      await client.responses.create({
        model: "claude-h",
        input: [
          ...input,
          ...(first.output as ResponseInputItem[]),
          { role: "user", content: `${name} again` },
        ],
        store: false,
      });
    };
    await Promise.all([turn("A"), turn("B")]);
    const rows = await rowsOf(subject);
    const conversations = new Set(rows.map((row) => row.conversation_id));
    expect(conversations.size).toBe(2);
    for (const conversation of conversations) {
      expectOneChain(
        rows.filter((row) => row.conversation_id === conversation),
        ["user", "assistant", "user", "assistant"],
      );
    }
  });

  async function aiSdkTurns(store: boolean): Promise<string> {
    const { subject, key } = await session();
    const model = createOpenAI({ apiKey: key, baseURL: stubbed.baseUrl }).responses("claude-ai");
    anthropic().script.push({ text: "Noted: 9." }, { text: "You said 9." }, { text: "Bye." });
    const messages: ModelMessage[] = [{ role: "user", content: "Remember 9." }];
    for (const next of ["What did I say?", "Goodbye."]) {
      const result = await generateText({
        model,
        system: "Be brief.",
        messages,
        providerOptions: { openai: { store } },
        maxRetries: 0,
      });
      messages.push(...result.response.messages, { role: "user", content: next });
    }
    const last = await generateText({
      model,
      system: "Be brief.",
      messages,
      providerOptions: { openai: { store } },
      maxRetries: 0,
    });
    expect(last.text).toBe("Bye.");
    expect(sentMessages()).toHaveLength(5);
    return subject;
  }

  it("AI SDK with client-managed history (store: false), three turns: one chain", async () => {
    const rows = await rowsOf(await aiSdkTurns(false));
    expectOneChain(rows, ["user", "user", "assistant", "user", "assistant", "user", "assistant"]);
  });

  it("AI SDK with store: true (its answers given back as item_reference), three turns: one chain", async () => {
    const rows = await rowsOf(await aiSdkTurns(true));
    expectOneChain(rows, ["user", "user", "assistant", "user", "assistant", "user", "assistant"]);
  });
});
