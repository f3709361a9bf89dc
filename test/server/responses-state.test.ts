/**
 * The state settings of a Responses request (issue 17): `conversation` continues that
 * conversation with its context, `store: false` is kept for the operator but neither readable
 * nor continuable by the caller (as in OpenAI's API), `background: true` answers at once and is
 * polled. The upstream is a stub model: a local server speaking the Anthropic wire format.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { startControlledUpstream } from "../support/controlled-upstream.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";
import { testServer } from "../support/server.js";

describeEachDialect("Responses API state settings", (getDatabase) => {
  let stubbed: StubbedServer;

  beforeAll(async () => {
    stubbed = await startStubbedServer(getDatabase());
  });
  afterAll(async () => {
    await stubbed.close();
  });

  it("conversation: the response continues the conversation's newest response, with its context, in that conversation", async () => {
    const first = await stubbed.post("/responses", { model: "claude-s", input: "Remember 7." });
    expect(first.status).toBe(200);
    const conversation = first.body.conversation_id as string;
    const second = await stubbed.post("/responses", {
      model: "claude-s",
      input: "What did I say?",
      conversation,
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.conversation_id).toBe(conversation);
    expect(second.body.conversation).toEqual({ id: conversation });
    expect(first.body.conversation).toBeNull();
    expect(second.body.previous_response_id).toBe(first.body.id);
    const sent = stubbed.lastSent("anthropic").messages;
    expect(JSON.stringify(sent)).toContain("Remember 7.");
    expect(sent).toHaveLength(3);
    const third = await stubbed.post("/responses", {
      model: "claude-s",
      input: "And now?",
      conversation: { id: conversation },
    });
    expect(third.body.previous_response_id).toBe(second.body.id);
  });

  it("conversation with previous_response_id, an unknown conversation, and another subject's are refused; nothing is written", async () => {
    const subject = uniqueName("state");
    const { key } = await stubbed.server.apiKeyFor(subject);
    const first = await stubbed.post("/responses", { model: "claude-s", input: "hi" });
    const rowsBefore = await stubbed.rowCount();
    const both = await stubbed.post("/responses", {
      model: "claude-s",
      input: "x",
      conversation: first.body.conversation_id,
      previous_response_id: first.body.id,
    });
    expect(both.status).toBe(400);
    expect(both.body.error.where).toBe("body.conversation");
    expect(await stubbed.rowCount()).toBe(rowsBefore);
    const foreign = await stubbed.post(
      "/responses",
      { model: "claude-s", input: "x", conversation: first.body.conversation_id },
      key,
    );
    expect(foreign.status).toBe(404);
    const unknown = await stubbed.post(
      "/responses",
      { model: "claude-s", input: "x", conversation: "conv_missing" },
      key,
    );
    expect(unknown.status).toBe(404);
    expect(await stubbed.rowCount(subject)).toBe(0);
  });

  it("store: false is kept for the operator, and the caller can neither read nor continue nor list it", async () => {
    const subject = uniqueName("unstored");
    const { key } = await stubbed.server.apiKeyFor(subject);
    const reply = await stubbed.post(
      "/responses",
      { model: "claude-s", input: "private", store: false },
      key,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.store).toBe(false);
    expect(reply.body.output[0].content[0].text).toBe("ok");
    expect(await stubbed.rowCount(subject)).toBe(2);
    expect((await stubbed.get(`/responses/${reply.body.id}`, key)).status).toBe(404);
    expect((await stubbed.get(`/responses/${reply.body.id}/input_items`, key)).status).toBe(404);
    const next = await stubbed.post(
      "/responses",
      { model: "claude-s", input: "more", previous_response_id: reply.body.id },
      key,
    );
    expect(next.status).toBe(404);
    const referenced = await stubbed.post(
      "/responses",
      { model: "claude-s", input: [{ type: "item_reference", id: reply.body.id }] },
      key,
    );
    expect(referenced.status).toBe(404);
    expect(await stubbed.rowCount(subject)).toBe(2);
    // The operator sees it.
    const operator = await stubbed.server.app.inject({
      method: "GET",
      url: `/ai-gateway/conversations/${reply.body.conversation_id}/messages`,
      headers: stubbed.server.operator,
    });
    expect(operator.statusCode).toBe(200);
    expect(operator.body).toContain("private");
  });

  it("with VERBATIM_KEEP_UNSTORED_RESPONSES=off a store: false response is answered (plain and streamed) and nothing is written", async () => {
    const upstream = await startControlledUpstream();
    const unkept = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
        VERBATIM_KEEP_UNSTORED_RESPONSES: "off",
      }),
    });
    try {
      const subject = uniqueName("unkept");
      const key = await unkept.apiKeyFor(subject);
      const reply = await unkept.app.inject({
        method: "POST",
        url: "/v1/responses",
        headers: key,
        payload: { model: "claude-s", input: "secret", store: false },
      });
      expect(reply.statusCode, reply.body).toBe(200);
      expect(reply.json()).toMatchObject({ status: "completed", store: false });
      expect(reply.json().output[0].content[0].text).toBe("ok");
      const streamed = await unkept.app.inject({
        method: "POST",
        url: "/v1/responses",
        headers: key,
        payload: { model: "claude-s", input: "secret", store: false, stream: true },
      });
      expect(streamed.body).toContain("response.completed");
      const rows = await sql<{ n: number | string }>`
        select count(*) as n from ai_gateway_messages where subject_uid = ${subject}`.execute(
        getDatabase().db,
      );
      expect(Number(rows.rows[0]?.n)).toBe(0);
      const read = await unkept.app.inject({
        method: "GET",
        url: `/v1/responses/${reply.json().id}`,
        headers: key,
      });
      expect(read.statusCode).toBe(404);
    } finally {
      await unkept.app.close();
      await upstream.close();
    }
  });

  it("background: true answers in_progress at once, runs on after the client left, and GET polls it to completed", async () => {
    // A stub model (Anthropic's wire format) that answers only when the test lets it.
    const upstream = await startControlledUpstream();
    let release = () => undefined as void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    upstream.answer = async (writer) => {
      writer.start("claude-s");
      await gate;
      writer.text("done later");
      writer.end();
    };
    const held = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
      }),
    });
    try {
      const key = await held.apiKeyFor(uniqueName("background"));
      const reply = await held.app.inject({
        method: "POST",
        url: "/v1/responses",
        headers: key,
        payload: { model: "claude-s", input: "work in the background", background: true },
      });
      expect(reply.statusCode, reply.body).toBe(200);
      expect(reply.json()).toMatchObject({ status: "in_progress", background: true, output: [] });
      const id = reply.json().id as string;
      const read = async () =>
        (await held.app.inject({ method: "GET", url: `/v1/responses/${id}`, headers: key })).json();
      expect((await read()).status).toBe("in_progress");
      release();
      let polled = await read();
      for (let attempt = 0; attempt < 200 && polled.status === "in_progress"; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        polled = await read();
      }
      expect(polled.status).toBe("completed");
      expect(polled.output[0].content[0].text).toBe("done later");
      expect(polled.background).toBe(true);
    } finally {
      release();
      await held.app.close();
      await upstream.close();
    }
  });

  it("background with stream, or with store: false, is refused naming it; nothing is written", async () => {
    const subject = uniqueName("background");
    const { key } = await stubbed.server.apiKeyFor(subject);
    for (const extra of [{ stream: true }, { store: false }]) {
      const reply = await stubbed.post(
        "/responses",
        { model: "claude-s", input: "x", background: true, ...extra },
        key,
      );
      expect(reply.status).toBe(400);
      expect(reply.body.error.where).toBe("body.background");
    }
    expect(await stubbed.rowCount(subject)).toBe(0);
  });
});
