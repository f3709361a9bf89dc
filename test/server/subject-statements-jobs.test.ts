/**
 * Issue 34 item 1, background agent jobs (B7, B8, B11, B13, B14): every statement the jobs run
 * on a subject-owned table names the subject, or is one of the few marked across subjects (the
 * console's list over every subject, the lookup of a job's owner from the id the console is
 * given). The workload goes through the real HTTP app: jobs created with and without an
 * idempotency key, attempts, turns, appends and steering with revisions, another subject's
 * ids, finishing, wake events and their claims, the console's job list and job page.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { listTurnItems } from "../../packages/server/src/store/repositories/background-job-items.js";
import { listWakeEvents } from "../../packages/server/src/store/repositories/background-job-wake-events.js";
import { listJobIdsOfConversation } from "../../packages/server/src/store/repositories/background-jobs.js";
import { jobChangeMark } from "../../packages/server/src/store/repositories/console-jobs.js";
import { postgresUrl, showSkipNotice, testDialects, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";
import {
  auditedDatabase,
  expectEveryStatementNamesTheSubject,
  expectStatementRan,
  type AuditedDatabase,
} from "../support/statement-audit.js";

const agent = (key: string, text: string) => ({
  item_key: key,
  item: { type: "agent_message", text },
});
const client = (key: string, text: string) => ({
  item_key: key,
  item: { type: "user_message", text },
});

type Headers = { readonly authorization: string };

/** The fields of the replies this test reads (each reply has some of them). */
interface Reply {
  readonly id: string;
  readonly turn: { readonly id: string; readonly revision: number };
  readonly items: readonly { readonly revision: number }[];
  readonly turns: readonly unknown[];
  readonly data: readonly unknown[];
  readonly next_cursor: string;
  readonly change_mark: string;
}

for (const dialect of testDialects) {
  const title = `B7 B8 B11 B13 B14 / issue 34 item 1: job statements name the subject [${dialect}]`;
  if (dialect === "postgres" && postgresUrl === undefined) {
    showSkipNotice(title);
    describe.skip(`${title} (skipped: VERBATIM_PG_URL is not set)`, () => {
      it("skipped", () => undefined);
    });
    continue;
  }
  describe(title, () => {
    let audit: AuditedDatabase;
    let server: TestServer;
    beforeAll(async () => {
      audit = await auditedDatabase(dialect);
      // The console's pages built on the event loop: on the audited connection.
      server = await testServer(audit.database, { consoleWorker: false });
    });
    afterAll(async () => {
      await server.app.close();
      await audit.cleanup();
    });

    it("creates, runs, steers, ends and claims jobs, and shows them in the console", async () => {
      const { app } = server;
      const subject = uniqueName("alice");
      const alice = await server.apiKeyFor(subject);
      const bob = await server.apiKeyFor(uniqueName("bob"));
      const [message] = await new GatewayMessageStore(audit.database).appendMessages(subject, {
        previousMessageId: null,
        messages: [{ role: "user", content: [{ type: "text", text: "Run the report job." }] }],
      });
      const conversationId = message?.conversationId ?? "";
      const post = (url: string, payload: object, headers: Headers = alice) =>
        app.inject({ method: "POST", url, headers, payload });
      const get = (url: string, headers: Headers = alice) =>
        app.inject({ method: "GET", url, headers });
      const ok = async (reply: Promise<{ statusCode: number; json(): unknown; body: string }>) => {
        const answered = await reply;
        expect(answered.statusCode, answered.body).toBe(200);
        return answered.json() as Reply;
      };

      // Jobs without and with an idempotency key (the repeat creates none).
      const job = await ok(
        post("/v1/background-agent-jobs", { conversation_id: conversationId, retry_budget: 1 }),
      );
      const keyed = { conversation_id: conversationId, idempotency_key: uniqueName("create") };
      const other = await ok(post("/v1/background-agent-jobs", keyed));
      expect((await ok(post("/v1/background-agent-jobs", keyed))).id).toBe(other.id);

      // Attempts, with and without a key.
      await ok(post(`/v1/background-agent-jobs/${job.id}/attempts`, {}));
      const attemptKey = { idempotency_key: uniqueName("attempt") };
      await ok(post(`/v1/background-agent-jobs/${other.id}/attempts`, attemptKey));
      await ok(post(`/v1/background-agent-jobs/${other.id}/attempts`, attemptKey));

      // Turns: with first items, keyed (and repeated), empty; appends, repeats, a conflict.
      const first = await ok(
        post(`/v1/background-agent-jobs/${job.id}/turns`, { items: [client("client:go", "go")] }),
      );
      const turnKey = { items: [agent("agent:k", "keyed")], idempotency_key: uniqueName("turn") };
      const keyedTurn = await ok(post(`/v1/background-agent-jobs/${job.id}/turns`, turnKey));
      expect((await ok(post(`/v1/background-agent-jobs/${job.id}/turns`, turnKey))).turn.id).toBe(
        keyedTurn.turn.id,
      );
      const turnId = first.turn.id;
      const items = `/v1/background-agent-job-turns/${turnId}/items`;
      await ok(post(items, { items: [agent("agent:1", "one"), agent("agent:2", "two")] }));
      await ok(post(items, { items: [agent("agent:2", "two"), agent("agent:3", "three")] }));
      expect((await post(items, { items: [agent("agent:1", "else")] })).statusCode).toBe(409);

      // Steering raises the revision; the items after it carry the new one.
      const steered = await ok(
        post(`/v1/background-agent-job-turns/${turnId}/steer`, {
          items: [client("client:more", "more")],
        }),
      );
      expect(steered.turn.revision).toBe(2);
      const appended = await ok(post(items, { items: [agent("agent:4", "four")] }));
      expect(appended.items[0]?.revision).toBe(2);
      await ok(post(`/v1/background-agent-job-turns/${turnId}/finish`, { status: "completed" }));
      expect((await ok(get(`/v1/background-agent-jobs/${job.id}`))).turns).toHaveLength(2);

      // Another subject's ids are not found, as missing ones are.
      expect((await get(`/v1/background-agent-jobs/${job.id}`, bob)).statusCode).toBe(404);
      expect((await post(items, { items: [agent("agent:1", "one")] }, bob)).statusCode).toBe(404);
      expect((await post(items, { items: [agent("agent:9", "new")] }, bob)).statusCode).toBe(404);

      // A failed attempt is retried within the budget; then the job ends; the other is cancelled.
      await ok(post(`/v1/background-agent-jobs/${job.id}/finish`, { status: "failed" }));
      await ok(post(`/v1/background-agent-jobs/${job.id}/attempts`, {}));
      await ok(post(`/v1/background-agent-jobs/${job.id}/finish`, { status: "succeeded" }));
      await ok(post(`/v1/background-agent-jobs/${other.id}/finish`, { status: "cancelled" }));

      // Wake events: the route claims one conversation's; a worker claims the subject's.
      const claim = "/v1/background-agent-jobs/wake-events/claim";
      const claimed = await ok(
        post(claim, { conversation_id: conversationId, consumer: "waker", limit: 1 }),
      );
      expect(claimed.data).toHaveLength(1);
      const jobs = new BackgroundAgentJobs(audit.database);
      expect(await jobs.claimWakeEvents(subject, { consumer: "sweeper" })).toHaveLength(1);
      expect(await jobs.claimWakeEvents(subject, { consumer: "late" })).toEqual([]);

      // The rest of the repository's reads of a subject's rows.
      const { db } = audit.database;
      expect(await listWakeEvents(db, subject, job.id)).toHaveLength(1);
      expect((await listTurnItems(db, subject, turnId)).length).toBeGreaterThan(4);
      expect(await listJobIdsOfConversation(db, subject, conversationId)).toHaveLength(2);
      expect(await jobChangeMark(db, job.id, subject)).toBeDefined();
      // Another subject has no such job.
      expect(await jobChangeMark(db, job.id, uniqueName("bob"))).toBeUndefined();

      // The console: lists over every subject and of one, and a job's page in three views.
      const console = (url: string) => ok(get(url, server.operator));
      const listed = await console("/background-agent-jobs?limit=1");
      expect(listed.data).toHaveLength(1);
      await console(`/background-agent-jobs?limit=1&cursor=${listed.next_cursor}`);
      await console(`/background-agent-jobs?subject_uid=${subject}&status=succeeded`);
      await console(
        `/background-agent-jobs?subject_prefix=alice&conversation_id=${conversationId}`,
      );
      const page = await console(`/background-agent-jobs/${job.id}`);
      expect(page.turns).toHaveLength(2);
      await console(`/background-agent-jobs/${job.id}?view=chatml`);
      await console(`/background-agent-jobs/${job.id}?view=model-visible`);
      await console(
        `/background-agent-jobs/${job.id}?wait_for_change=${page.change_mark}&wait_ms=20`,
      );
      expect((await get("/background-agent-jobs/job_missing", server.operator)).statusCode).toBe(
        404,
      );

      await expectEveryStatementNamesTheSubject(audit);
      for (const fragment of [
        'insert into "background_agent_jobs"',
        'insert into "ai_gateway_idempotency_keys"',
        'update "background_agent_jobs"',
        'insert into "background_agent_job_turns"',
        'update "background_agent_job_turns"',
        'insert into "background_agent_job_turn_items"',
        'from "background_agent_job_turn_items"',
        'insert into "background_agent_job_wake_events"',
        'update "background_agent_job_wake_events"',
        'select "subject_uid" from "background_agent_jobs"',
        'from "background_agent_jobs" order by "created_at" desc',
      ]) {
        expectStatementRan(audit, fragment);
      }
      if (dialect === "postgres") expectStatementRan(audit, "for update skip locked");
    });
  });
}
