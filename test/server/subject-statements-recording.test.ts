/**
 * Issue 34 item 1, recorded calls (issue 33's recording, bytes, packing and retention): every
 * statement the recording area runs on a subject-owned table names the subject, or is one of the
 * few marked across subjects (the owner of a call the operator names by id alone, the migration
 * of old body rows, the cutoff scans of a prune, the look for calls a dead server left). The
 * workload: a recorded /v1/messages session and a fork of it through the real HTTP app with an
 * Anthropic stub, a Gemini call, the operator's routes for a call's facts and bytes and a
 * conversation's cache report, the raw export, packing, the conversion of a call kept in the
 * old form and its placing as a leftover, the history backfill, `db prune` with and without
 * `--subject` (dry runs too), and `db delete-subject`.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerbatimError } from "verbatim-llm/core";
import { exportRecordedBody } from "../../packages/server/src/gateway/export/recorded-body.js";
import {
  deleteSubject,
  pruneStore,
} from "../../packages/server/src/gateway/maintenance/retention.js";
import { backfillRecordedHistory } from "../../packages/server/src/gateway/recording/backfill.js";
import { codecOf } from "../../packages/server/src/gateway/recording/bodies/compression.js";
import { convertOldBodies } from "../../packages/server/src/gateway/recording/bodies/convert.js";
import { packSubject } from "../../packages/server/src/gateway/recording/bodies/packing.js";
import { cacheReports } from "../../packages/server/src/gateway/recording/cache-report.js";
import { RecordedCalls } from "../../packages/server/src/gateway/recording/calls.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { insertRecordedCall } from "../../packages/server/src/store/repositories/recorded-calls.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { postgresUrl, showSkipNotice, testDialects, uniqueName } from "../support/databases.js";
import { startGeminiUpstream, type GeminiUpstream } from "../support/gemini-upstream.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { testServer, type TestServer } from "../support/server.js";
import {
  auditedDatabase,
  expectEveryStatementNamesTheSubject,
  expectStatementRan,
  type AuditedDatabase,
} from "../support/statement-audit.js";

const GEMINI_KEY = "gemini-upstream-key";
/** Long enough that a session's calls are diffs of one another and pieces are worth packing. */
const SYSTEM = `You are a careful assistant. ${Array.from({ length: 600 }, (_, index) => `rule ${index}: be exact.`).join(" ")}`;
const LONG_AGO = "2020-01-01T00:00:00.000Z";

/** A request body of the session: the system prompt and the messages so far. */
function anthropicBody(messages: readonly unknown[]): string {
  return JSON.stringify({ model: "claude-test", max_tokens: 64, system: SYSTEM, messages });
}

for (const dialect of testDialects) {
  const title = `B3 B14 / issue 34 item 1: recorded calls' statements name the subject [${dialect}]`;
  if (dialect === "postgres" && postgresUrl === undefined) {
    showSkipNotice(title);
    describe.skip(`${title} (skipped: VERBATIM_PG_URL is not set)`, () => {
      it("skipped", () => undefined);
    });
    continue;
  }
  describe(title, () => {
    let audit: AuditedDatabase;
    let anthropic: AnthropicUpstream;
    let gemini: GeminiUpstream;
    let server: TestServer;
    let serverOpen = false;
    beforeAll(async () => {
      audit = await auditedDatabase(dialect);
      anthropic = await startAnthropicUpstream();
      gemini = await startGeminiUpstream({ apiKey: GEMINI_KEY });
      server = await testServer(audit.database, {
        consoleWorker: false,
        upstream: upstreamConfigFromEnv({
          ANTHROPIC_API_KEY: "sk-ant-upstream",
          ANTHROPIC_BASE_URL: anthropic.url,
          GEMINI_API_KEY: GEMINI_KEY,
          GEMINI_BASE_URL: gemini.baseUrl,
        }),
      });
      serverOpen = true;
    });
    afterAll(async () => {
      if (serverOpen) await server.app.close();
      await anthropic.close();
      await gemini.close();
      await audit.cleanup();
    });

    it("records, reads back, exports, packs, converts, prunes and deletes naming the subject", async () => {
      const { app } = server;
      const alice = uniqueName("alice");
      const bob = uniqueName("bob");
      const carol = uniqueName("carol");
      const aliceKey = (await server.apiKeyFor(alice)).key;
      const bobKey = (await server.apiKeyFor(bob)).key;
      const messagesCall = async (key: string, body: string): Promise<void> => {
        const reply = await app.inject({
          method: "POST",
          url: "/v1/messages",
          headers: {
            "content-type": "application/json",
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
          },
          payload: body,
        });
        expect(reply.statusCode, reply.body).toBe(200);
      };

      // Alice: a session of three calls (each continues the one before), then a fork of it.
      const sent = new Map<string, string>();
      const session: unknown[] = [{ role: "user", content: "Summarise the rules." }];
      for (let turn = 0; turn < 3; turn++) {
        await messagesCall(aliceKey, anthropicBody(session));
        await callsPlaced(audit.database, alice, turn + 1);
        session.push({ role: "assistant", content: `You said: turn ${turn}` });
        session.push({ role: "user", content: `And rule ${turn}?` });
      }
      const fork = anthropicBody([{ role: "user", content: "Only the first rule, please." }]);
      await messagesCall(aliceKey, fork);
      await callsPlaced(audit.database, alice, 4);
      // Bob: one call, and a Gemini call.
      await messagesCall(bobKey, anthropicBody([{ role: "user", content: "Hello from Bob." }]));
      const geminiReply = await app.inject({
        method: "POST",
        url: "/v1beta/models/gemini-2.5-flash:generateContent",
        headers: { "content-type": "application/json", "x-goog-api-key": bobKey },
        payload: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hi Gemini." }] }] }),
      });
      expect(geminiReply.statusCode, geminiReply.body).toBe(200);
      await callsPlaced(audit.database, bob, 2);

      const rows = await recordedCallRows(audit.database, alice);
      for (const row of rows) sent.set(row.id, row.requestText);
      const [first, , third, forked] = rows;
      if (first === undefined || third === undefined || forked === undefined) {
        throw new Error("alice's four calls were recorded");
      }
      expect(forked.conversation_id).not.toBe(first.conversation_id);

      // The operator's routes, given an id alone: facts, exact bytes, the cache report.
      const operator = server.operator;
      const facts = await app.inject({
        url: `/ai-gateway/recorded-calls/${third.id}`,
        headers: operator,
      });
      expect(facts.statusCode, facts.body).toBe(200);
      expect(facts.json()).toMatchObject({ id: third.id, subject_uid: alice });
      const request = await app.inject({
        url: `/ai-gateway/recorded-calls/${third.id}/request`,
        headers: operator,
      });
      expect(request.statusCode).toBe(200);
      expect(request.body).toBe(third.requestText);
      const response = await app.inject({
        url: `/ai-gateway/recorded-calls/${third.id}/response`,
        headers: operator,
      });
      expect(response.rawPayload.equals(third.response)).toBe(true);
      for (const path of ["", "/request", "/response"]) {
        const missing = await app.inject({
          url: `/ai-gateway/recorded-calls/call_nothing${path}`,
          headers: operator,
        });
        expect(missing.statusCode).toBe(404);
      }
      const report = await app.inject({
        url: `/ai-gateway/conversations/${first.conversation_id}/cache`,
        headers: operator,
      });
      expect(report.statusCode, report.body).toBe(200);
      expect((await cacheReports(audit.database, {})).length).toBeGreaterThanOrEqual(3);
      expect((await cacheReports(audit.database, { subjectUid: alice })).length).toBe(2);

      // The raw export names its subject: another subject's export does not find the call.
      // The export opens the store again: its statements are audited too.
      const open = {
        onStatement: (text: string, values?: readonly unknown[]) => {
          (audit.statements as Set<string>).add(text);
          const parameters = audit.parameters as Map<string, readonly unknown[]>;
          if (values !== undefined && !parameters.has(text)) parameters.set(text, values);
        },
      };
      const exported = await exportRecordedBody({
        location: audit.location,
        subject: alice,
        id: third.id,
        which: "request",
        open,
      });
      expect(exported.toString("utf8")).toBe(third.requestText);
      await expect(
        exportRecordedBody({
          location: audit.location,
          subject: bob,
          id: third.id,
          which: "response",
          open,
        }),
      ).rejects.toSatisfy(
        (error: unknown) => error instanceof VerbatimError && error.code === "resource_not_found",
      );

      // Packing, then the bytes read back from the packs.
      const packed = await packSubject(audit.database, alice, { codec: codecOf("auto") });
      expect(packed.packs).toBeGreaterThan(0);
      const fromPacks = await app.inject({
        url: `/ai-gateway/recorded-calls/${forked.id}/request`,
        headers: operator,
      });
      expect(fromPacks.body).toBe(forked.requestText);

      await server.app.close();
      serverOpen = false;

      // A call kept in the old form (before migration 0015): converted, then placed as a leftover.
      const oldId = uniqueName("call_old");
      const oldRequest = anthropicBody([{ role: "user", content: "From before the pieces." }]);
      await insertRecordedCall(audit.database.db, {
        id: oldId,
        subject_uid: carol,
        conversation_id: "",
        wire_format: "anthropic-messages",
        path: "/v1/messages",
        model: "claude-test",
        tip_prefix_sha256: "",
        message_count: 1,
        matched_count: 0,
        previous_call_id: null,
        status_code: 200,
        request_headers: "{}",
        request_body: oldRequest,
        response_headers: JSON.stringify({ "content-type": "application/json" }),
        response_body_base64: Buffer.from(
          JSON.stringify({
            id: "msg_old",
            type: "message",
            role: "assistant",
            model: "claude-test",
            content: [{ type: "text", text: "old answer" }],
            stop_reason: "end_turn",
            usage: { input_tokens: 3, output_tokens: 2 },
          }),
        ).toString("base64"),
        redacted: 0,
        input_tokens: null,
        output_tokens: null,
        cache_read_tokens: null,
        cache_write_tokens: null,
        duration_ms: 1,
        created_at: new Date().toISOString(),
        body_storage: 0,
      });
      expect((await convertOldBodies(audit.database)).calls).toBe(1);
      const recorder = new RecordedCalls(audit.database);
      await recorder.placeLeftovers();
      await recorder.close();
      await callsPlaced(audit.database, carol, 1);
      expect((await recordedCallRows(audit.database, carol))[0]?.requestText).toBe(oldRequest);

      // The history backfill (a conversation listed by migration 0012).
      await audit.database.db
        .insertInto("ai_gateway_history_backfills")
        .values({ subject_uid: carol, conversation_id: "conv_listed" })
        .execute();
      await backfillRecordedHistory(audit.database);

      // `db prune --subject alice`: the session's conversation ended long ago; the fork stays,
      // its request (a diff of the session's last call) written flat first.
      const age = async (subject: string, conversationId: string): Promise<void> => {
        await sql`update ai_gateway_conversations set created_at = ${LONG_AGO}
          where subject_uid = ${subject} and id = ${conversationId}`.execute(audit.database.db);
        await sql`update ai_gateway_messages set updated_at = ${LONG_AGO}, created_at = ${LONG_AGO}
          where subject_uid = ${subject} and conversation_id = ${conversationId}`.execute(
          audit.database.db,
        );
        await sql`update ai_gateway_recorded_calls set created_at = ${LONG_AGO}
          where subject_uid = ${subject} and conversation_id = ${conversationId}`.execute(
          audit.database.db,
        );
      };
      await age(alice, first.conversation_id);
      for (const table of ["ai_gateway_body_pieces", "ai_gateway_body_packs"]) {
        await sql`update ${sql.table(table)} set created_at = ${LONG_AGO}
          where subject_uid = ${alice}`.execute(audit.database.db);
      }
      const cutoff = "2021-01-01T00:00:00.000Z";
      const dry = await pruneStore(audit.database, {
        before: cutoff,
        subjectUid: alice,
        dryRun: true,
      });
      expect(dry.conversations).toBe(1);
      const pruned = await pruneStore(audit.database, { before: cutoff, subjectUid: alice });
      expect(pruned.conversations).toBe(1);
      expect(pruned.recorded_calls).toBe(3);
      const left = await recordedCallRows(audit.database, alice);
      expect(left.map((row) => [row.id, row.requestText])).toEqual([
        [forked.id, sent.get(forked.id)],
      ]);
      expect(left[0]?.request_base_call_id).toBeNull();

      // `db prune` over every subject: Bob's conversations and an unplaced call of his go.
      for (const row of await recordedCallRows(audit.database, bob))
        await age(bob, row.conversation_id);
      await insertRecordedCall(audit.database.db, {
        id: uniqueName("call_unplaced"),
        subject_uid: bob,
        conversation_id: "",
        wire_format: "anthropic-messages",
        path: "/v1/messages",
        model: "claude-test",
        tip_prefix_sha256: "",
        message_count: 0,
        matched_count: 0,
        previous_call_id: null,
        status_code: 500,
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
        created_at: LONG_AGO,
        body_storage: 0,
      });
      expect(
        (await pruneStore(audit.database, { before: cutoff, dryRun: true })).recorded_calls,
      ).toBe(3);
      const everyone = await pruneStore(audit.database, { before: cutoff });
      expect(everyone.conversations).toBe(2);
      expect(everyone.recorded_calls).toBe(3);
      expect(await recordedCallRows(audit.database, bob)).toEqual([]);

      // `db delete-subject`, dry run first.
      expect((await deleteSubject(audit.database, alice, { dryRun: true })).recorded_calls).toBe(1);
      expect((await deleteSubject(audit.database, alice)).recorded_calls).toBe(1);
      expect((await deleteSubject(audit.database, carol)).recorded_calls).toBe(1);
      expect(await recordedCallRows(audit.database, alice)).toEqual([]);

      await expectEveryStatementNamesTheSubject(audit);
      // The workload reached the statements that matter (it cannot pass by running nothing).
      for (const fragment of [
        'insert into "ai_gateway_recorded_calls"',
        'update "ai_gateway_recorded_calls" set "conversation_id"',
        'insert into "ai_gateway_chain_nodes"',
        'insert into "ai_gateway_body_pieces"',
        'insert into "ai_gateway_body_packs"',
        "with recursive chain",
        'select "subject_uid" from "ai_gateway_recorded_calls" where "id"',
        '"body_storage" = 0',
        'set "request_manifest"',
        'from "ai_gateway_history_backfills"',
        'delete from "ai_gateway_recorded_calls"',
        'delete from "ai_gateway_body_packs"',
        'delete from "ai_gateway_idempotency_keys"',
        'delete from "ai_gateway_conversations"',
      ]) {
        expectStatementRan(audit, fragment);
      }
    });
  });
}
