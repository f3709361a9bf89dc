/**
 * Regression: "Trajectory item keys and texts are not checked for well-formed Unicode or NUL"
 * (issue 15). On SQLite `key-\ud800` and `key-\udfff` were stored as the same key (both U+FFFD)
 * and the job's three console views failed from then on (`trajectory_rows_inconsistent`); on
 * PostgreSQL the same input answered 500. Every stored string of the job routes now follows
 * one rule (src/core/stored-text.ts): refused with a clear 400 naming the field, and nothing
 * written. B7.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect(
  "trajectory items not checked for well-formed Unicode or NUL",
  (getDatabase) => {
    let server: TestServer;
    let caller: { authorization: string };
    let subject: string;
    let conversationId: string;
    let jobId: string;
    let turnId: string;

    beforeAll(async () => {
      server = await testServer(getDatabase());
      subject = uniqueName("subject");
      caller = await server.apiKeyFor(subject);
      const [message] = await new GatewayMessageStore(getDatabase()).appendMessages(subject, {
        previousMessageId: null,
        messages: [{ role: "user", content: [{ type: "text", text: "Run the job." }] }],
      });
      conversationId = message?.conversationId ?? "";
      jobId = (await post("/v1/background-agent-jobs", { conversation_id: conversationId })).json()
        .id;
      await post(`/v1/background-agent-jobs/${jobId}/attempts`, {});
      const turn = await post(`/v1/background-agent-jobs/${jobId}/turns`, {
        items: [{ item_key: "client:prompt", item: { type: "user_message", text: "Go" } }],
      });
      turnId = turn.json().turn.id;
    });
    afterAll(async () => {
      await server.app.close();
    });

    const post = (url: string, payload: unknown) =>
      server.app.inject({ method: "POST", url, headers: caller, payload: payload as object });
    const counts = async () => {
      const db = getDatabase().db;
      const count = async (table: string) =>
        Number(
          (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db))
            .rows[0]?.n,
        );
      return {
        jobs: await count("background_agent_jobs"),
        turns: await count("background_agent_job_turns"),
        items: await count("background_agent_job_turn_items"),
        wake: await count("background_agent_job_wake_events"),
      };
    };
    const agent = (text: string) => ({ type: "agent_message", text });

    it("B7 the two lone-surrogate keys of the report are refused, and the console views still work", async () => {
      const before = await counts();
      for (const key of ["key-\ud800", "key-\udfff"]) {
        const reply = await post(`/v1/background-agent-job-turns/${turnId}/items`, {
          items: [{ item_key: key, item: agent(`under ${key.length}`) }],
        });
        expect(reply.statusCode).toBe(400);
        expect(reply.json().error.where).toBe("body.items[0].item_key");
        expect(reply.json().error.message).toMatch(/lone surrogate at character 4/);
      }
      expect(await counts()).toEqual(before);
      for (const view of ["stored", "chatml", "model-visible"]) {
        const shown = await server.app.inject({
          method: "GET",
          url: `/background-agent-jobs/${jobId}?view=${view}`,
          headers: server.operator,
        });
        expect({ view, status: shown.statusCode }).toEqual({ view, status: 200 });
      }
    });

    it("B7 every stored string of every job route: lone surrogates, NUL and __proto__ keys get 400, nothing written", async () => {
      const cases: { name: string; url: string; body: unknown; where: string }[] = [];
      const bad = [
        { name: "lone high surrogate", text: "a\ud800b" },
        { name: "lone low surrogate", text: "a\udfffb" },
        { name: "NUL", text: "a\u0000b" },
      ];
      for (const { name, text } of bad) {
        for (const [route, url] of [
          ["items", `/v1/background-agent-job-turns/${turnId}/items`],
          ["steer", `/v1/background-agent-job-turns/${turnId}/steer`],
          ["turns", `/v1/background-agent-jobs/${jobId}/turns`],
        ] as const) {
          const key = route === "steer" ? "client:fine" : "agent:fine";
          cases.push(
            {
              name: `${route}: ${name} in a key`,
              url,
              body: { items: [{ item_key: `client:${text}`, item: agent("x") }] },
              where: "body.items[0].item_key",
            },
            {
              name: `${route}: ${name} in a text`,
              url,
              body: {
                items: [
                  {
                    item_key: key,
                    item:
                      route === "steer"
                        ? { type: "user_message", text }
                        : { type: "agent_message", text },
                  },
                ],
              },
              where: "body.items[0].item.text",
            },
          );
        }
        cases.push(
          {
            name: `items: ${name} deep in an item`,
            url: `/v1/background-agent-job-turns/${turnId}/items`,
            body: {
              items: [
                {
                  item_key: "change:1",
                  item: {
                    type: "file_change",
                    call_id: "call_1",
                    changes: [{ path: `src/${text}.ts`, kind: "add" }],
                    status: "completed",
                    execution_mechanism: "local_dynamic",
                  },
                },
              ],
            },
            where: "body.items[0].item.changes[0].path",
          },
          {
            name: `create: ${name} in a metadata value`,
            url: "/v1/background-agent-jobs",
            body: { conversation_id: conversationId, metadata: { team: text } },
            where: "body.metadata.team",
          },
          {
            name: `finish: ${name} in the result`,
            url: `/v1/background-agent-jobs/${jobId}/finish`,
            body: { status: "succeeded", result: { summary: [text] } },
            where: "body.result.summary[0]",
          },
          {
            name: `finish: ${name} in the error`,
            url: `/v1/background-agent-jobs/${jobId}/finish`,
            body: { status: "failed", error: text },
            where: "body.error",
          },
          {
            name: `claim: ${name} in the consumer`,
            url: "/v1/background-agent-jobs/wake-events/claim",
            body: { conversation_id: conversationId, consumer: text },
            where: "body.consumer",
          },
        );
      }
      cases.push(
        {
          name: "items: __proto__ as a key of an item",
          url: `/v1/background-agent-job-turns/${turnId}/items`,
          body: JSON.parse(
            '{"items":[{"item_key":"agent:proto","item":{"type":"agent_message","text":"x","__proto__":"y"}}]}',
          ),
          where: "body.items[0].item.__proto__",
        },
        {
          name: "create: __proto__ as a metadata key",
          url: "/v1/background-agent-jobs",
          body: JSON.parse(`{"conversation_id":"${conversationId}","metadata":{"__proto__":"x"}}`),
          where: "body.metadata.__proto__",
        },
        {
          name: "finish: __proto__ as a key of the result",
          url: `/v1/background-agent-jobs/${jobId}/finish`,
          body: JSON.parse('{"status":"succeeded","result":{"__proto__":{"x":1}}}'),
          where: "body.result.__proto__",
        },
      );
      const before = await counts();
      const job = (
        await server.app.inject({
          method: "GET",
          url: `/v1/background-agent-jobs/${jobId}`,
          headers: caller,
        })
      ).json();
      for (const one of cases) {
        const reply = await server.app.inject({
          method: "POST",
          url: one.url,
          headers: { ...caller, "content-type": "application/json" },
          // Sent as JSON text: a __proto__ key survives only as an own key of parsed JSON.
          payload: JSON.stringify(one.body),
        });
        expect({
          case: one.name,
          status: reply.statusCode,
          where: reply.json().error?.where,
        }).toEqual({ case: one.name, status: 400, where: one.where });
        expect(reply.json().error.hint).toMatch(/nothing was written/);
      }
      expect(await counts()).toEqual(before);
      const after = (
        await server.app.inject({
          method: "GET",
          url: `/v1/background-agent-jobs/${jobId}`,
          headers: caller,
        })
      ).json();
      expect(after).toEqual(job);
    });

    it("B7 the job service refuses the same strings when called as a library, before any write", async () => {
      const jobs = new BackgroundAgentJobs(getDatabase());
      const before = await counts();
      for (const key of ["key-\ud800", "key-\udfff", "key-\u0000"]) {
        await expect(
          jobs.appendItems(subject, turnId, [{ item_key: key, item: agent("x") }]),
        ).rejects.toMatchObject({ code: "gateway_input_invalid", where: "items[0].item_key" });
      }
      await expect(
        jobs.appendItems(subject, turnId, [
          { item_key: "agent:nul", item: JSON.parse('{"type":"agent_message","text":"a\\u0000"}') },
        ]),
      ).rejects.toMatchObject({ code: "gateway_input_invalid", where: "items[0].item.text" });
      await expect(
        jobs.appendItems(subject, turnId, [
          {
            item_key: "agent:proto",
            item: JSON.parse('{"type":"agent_message","text":"x","__proto__":"y"}'),
          },
        ]),
      ).rejects.toMatchObject({ where: "items[0].item.__proto__" });
      await expect(jobs.completeJob(subject, jobId, { note: "\ud800" })).rejects.toMatchObject({
        code: "gateway_input_invalid",
        where: "result.note",
      });
      await expect(jobs.failAttempt(subject, jobId, "boom\u0000")).rejects.toMatchObject({
        where: "error",
      });
      await expect(
        jobs.claimWakeEvents(subject, { consumer: "worker\u0000", conversationId }),
      ).rejects.toMatchObject({ where: "consumer" });
      // An id that breaks the rule names no record: not found, without a query.
      await expect(jobs.getJob(subject, "job_\u0000")).rejects.toMatchObject({
        code: "job_not_found",
      });
      await expect(
        jobs.appendItems(subject, "turn_\ud800", [{ item_key: "agent:9", item: agent("x") }]),
      ).rejects.toMatchObject({ code: "job_not_found" });
      await expect(
        jobs.createJob(subject, { conversationId: "conv_\u0000", retryBudget: 0 }),
      ).rejects.toMatchObject({ code: "gateway_conversation_not_found" });
      expect(await counts()).toEqual(before);
    });
  },
);
