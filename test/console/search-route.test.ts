/**
 * GET /ai-gateway/search and the list filters on both databases (issue 20): full-text search
 * across messages and job items (any script, emoji, short text, LIKE wildcards taken
 * literally), paging, the index kept in step with messages finished after they started, and
 * the filters of the console lists.
 */
import { expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer } from "../support/server.js";

interface Hit {
  kind: string;
  conversation_id: string | null;
  message_id: string | null;
  job_id: string | null;
  item_key: string | null;
  snippet: string;
}

describeEachDialect("console search and filters", (getDatabase) => {
  async function search(
    query: string,
    extra = "",
  ): Promise<{ status: number; data: Hit[]; next_cursor: string | null }> {
    const server = await testServer(getDatabase());
    const reply = await server.app.inject({
      method: "GET",
      url: `/ai-gateway/search?q=${encodeURIComponent(query)}${extra}`,
      headers: server.operator,
    });
    await server.app.close();
    const body = reply.json() as { data: Hit[]; next_cursor: string | null };
    return { status: reply.statusCode, ...body };
  }

  it("B14 finds a Japanese phrase, an emoji and a two-letter word in messages and items", async () => {
    const subject = uniqueName("subject");
    const marker = uniqueName("m");
    const store = new GatewayMessageStore(getDatabase());
    const [message] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: `${marker} 東京の天気は晴れです 🌞 qz` }] },
      ],
    });
    const jobs = new BackgroundAgentJobs(getDatabase());
    const job = await jobs.createJob(subject, {
      conversationId: message?.conversationId ?? "",
      retryBudget: 0,
    });
    await jobs.startAttempt(subject, job.id);
    await jobs.startTurn(subject, job.id, [
      { item_key: "agent:1", item: { type: "agent_message", text: `${marker} item: 天気 and 🌈` } },
    ]);

    const japanese = await search(`${marker} 東京の天気`);
    expect(japanese.status).toBe(200);
    expect(japanese.data.map((hit) => hit.message_id)).toEqual([message?.id]);
    expect(japanese.data[0]?.snippet).toContain("東京の天気は晴れです");

    const both = await search("天気は");
    expect(both.data.some((hit) => hit.message_id === message?.id)).toBe(true);
    const items = await search(`${marker} item`);
    expect(items.data).toMatchObject([{ kind: "item", job_id: job.id, item_key: "agent:1" }]);

    for (const short of ["🌞", "🌈", "qz"]) {
      const found = await search(short);
      expect(found.data.length, short).toBeGreaterThan(0);
    }
    expect((await search("🌞")).data.some((hit) => hit.message_id === message?.id)).toBe(true);
    expect(
      (await search("🌈")).data.some((hit) => hit.item_key === "agent:1" && hit.job_id === job.id),
    ).toBe(true);
  });

  it("B14 LIKE wildcards and quotes are searched as text, case-insensitively", async () => {
    const subject = uniqueName("subject");
    const marker = uniqueName("w");
    const store = new GatewayMessageStore(getDatabase());
    await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: `${marker} 100% "quoted" under_score` }] },
      ],
    });
    expect((await search(`${marker} 100%`)).data).toHaveLength(1);
    expect((await search(`${marker} 100_`)).data).toHaveLength(0);
    expect((await search(`${marker.toUpperCase()} 100%`)).data).toHaveLength(1);
    expect((await search(`"quoted"`)).data.length).toBeGreaterThan(0);
    expect((await search(`${marker} zzz`)).data).toHaveLength(0);
  });

  it("B14 a message finished after it started is found by its final text; pages follow", async () => {
    const subject = uniqueName("subject");
    const marker = uniqueName("f");
    const store = new GatewayMessageStore(getDatabase());
    const [first] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: `${marker} question` }] }],
    });
    const started = await store.startMessage(subject, {
      previousMessageId: first?.id ?? null,
      message: { role: "assistant", content: [] },
    });
    await store.finishMessage(subject, started.id, {
      status: "completed",
      content: [{ type: "text", text: `${marker} final answer` }],
    });
    expect((await search(`${marker} final`)).data.map((hit) => hit.message_id)).toEqual([
      started.id,
    ]);
    const firstPage = await search(marker, "&limit=1");
    expect(firstPage.data).toHaveLength(1);
    expect(firstPage.next_cursor).not.toBeNull();
    const second = await search(marker, `&limit=1&cursor=${firstPage.next_cursor}`);
    expect(second.data).toHaveLength(1);
    expect(second.data[0]?.message_id).not.toBe(firstPage.data[0]?.message_id);
    expect(second.next_cursor).toBeNull();
  });

  it("B14 a search text that breaks the stored-text rule is 400", async () => {
    expect((await search("a\u0000b")).status).toBe(400);
    expect((await search("")).status).toBe(400);
  });

  it("B14 / issue 34 a subject filter that names no subject is 400, as the list answers it", async () => {
    const server = await testServer(getDatabase());
    const reply = async (url: string) => {
      const answer = await server.app.inject({ method: "GET", url, headers: server.operator });
      // The whole error but its request id, which is each request's own.
      const { request_id: _id, ...error } =
        (answer.json() as { error?: Record<string, unknown> }).error ?? {};
      return { status: answer.statusCode, error };
    };
    for (const subject of ["", "%00", "a%00b", "s".repeat(201)]) {
      const list = await reply(`/ai-gateway/conversations?subject_uid=${subject}`);
      const search = await reply(`/ai-gateway/search?q=hello&subject_uid=${subject}`);
      expect(list).toMatchObject({
        status: 400,
        error: { code: "invalid_request", where: "querystring.subject_uid" },
      });
      expect(search, subject).toEqual(list);
    }
    await server.app.close();
  });

  it("B14 the lists filter by subject prefix, model and creation date", async () => {
    const prefix = uniqueName("prefix");
    const store = new GatewayMessageStore(getDatabase());
    const [one] = await store.appendMessages(`${prefix}-a`, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "hi" }] },
        {
          role: "assistant",
          content: [{ type: "text", text: "hello" }],
          gateway: { model: `${prefix}-model` },
        },
      ],
    });
    await store.appendMessages(`${prefix}-b`, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    const server = await testServer(getDatabase());
    const list = async (query: string) => {
      const reply = await server.app.inject({
        method: "GET",
        url: `/ai-gateway/conversations?${query}`,
        headers: server.operator,
      });
      expect(reply.statusCode, query).toBe(200);
      return (reply.json() as { data: { id: string; subject_uid: string }[] }).data;
    };
    expect((await list(`subject_prefix=${prefix}`)).map((row) => row.subject_uid).sort()).toEqual([
      `${prefix}-a`,
      `${prefix}-b`,
    ]);
    expect(
      (await list(`subject_prefix=${prefix}&model=${prefix}-model`)).map((row) => row.id),
    ).toEqual([one?.conversationId]);
    expect(await list(`subject_prefix=${prefix}&created_before=2000-01-01T00:00:00.000Z`)).toEqual(
      [],
    );
    expect(await list(`subject_prefix=${prefix}&created_after=2999-01-01T00:00:00.000Z`)).toEqual(
      [],
    );
    expect(await list(`subject_prefix=${encodeURIComponent("%")}`)).toEqual([]);
    const jobs = await server.app.inject({
      method: "GET",
      url: `/background-agent-jobs?subject_prefix=${prefix}&created_after=2000-01-01T00:00:00.000Z`,
      headers: server.operator,
    });
    expect(jobs.statusCode).toBe(200);
    await server.app.close();
  });
});
