/**
 * Issue 34 item 1, conversations and responses (B2 B4 B5 B6): every statement the Responses and
 * Conversations APIs, the response leases, the caller deletions, the idempotent retries, the
 * images and the import of sessions run on a subject-owned table names the subject, or is the one
 * marked across subjects (the reconciliation that finds any server's expired leases). The
 * workload goes through the real HTTP app and the gateway's import: responses created, continued
 * (previous_response_id), forked, streamed, run in the background, cancelled, read, replayed,
 * listed, counted, compressed twice with one key and deleted; conversations created, read,
 * updated, appended to, listed and deleted, items read and deleted; another subject's ids;
 * leases held, renewed, released and ended; Claude Code sessions imported, imported again, and
 * a Codex session imported half and then whole.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import {
  PLANNED_MESSAGE_COLUMNS,
  packContents,
  writeChainBatch,
  type ChainBatch,
} from "../../packages/server/src/gateway/import/chain-batch.js";
import { importChainsIntoDatabase } from "../../packages/server/src/gateway/import/chains.js";
import {
  ResponseLeases,
  SERVER_INTERRUPTED,
} from "../../packages/server/src/gateway/responses/leases.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { ACROSS_SUBJECTS } from "../../packages/server/src/store/subject-keys.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { postgresUrl, showSkipNotice, testDialects, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";
import { until } from "../support/until.js";
import {
  auditedDatabase,
  expectEveryStatementNamesTheSubject,
  expectStatementRan,
  type AuditedDatabase,
} from "../support/statement-audit.js";

/** A 1×1 PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const interop = new URL("../fixtures/interop/", import.meta.url).pathname;
/** A Claude Code project folder: sessions and their sub-agents' files. */
const claudeFolder = join(interop, "claude-code/2.0-project-folder/-Users-user-project");
const codexFile = join(interop, "codex/0.129/turn-2.jsonl");

type Headers = { readonly authorization: string };

/** The fields of the replies this test reads (each reply has some of them). */
interface Reply {
  readonly id: string;
  readonly status: string;
  readonly output: readonly { readonly id: string }[];
  readonly data: readonly { readonly id: string }[];
  readonly conversation_id: string;
}

for (const dialect of testDialects) {
  const title = `B2 B4 B5 B6 / issue 34 item 1: conversation and response statements name the subject [${dialect}]`;
  if (dialect === "postgres" && postgresUrl === undefined) {
    showSkipNotice(title);
    describe.skip(`${title} (skipped: VERBATIM_PG_URL is not set)`, () => {
      it("skipped", () => undefined);
    });
    continue;
  }
  describe(title, { timeout: 60_000 }, () => {
    let audit: AuditedDatabase;
    let upstream: AnthropicUpstream;
    let server: TestServer;
    let alice: Headers;
    let bob: Headers;
    let folder: string;
    beforeAll(async () => {
      audit = await auditedDatabase(dialect);
      upstream = await startAnthropicUpstream();
      server = await testServer(audit.database, {
        upstream: {
          ...upstreamConfigFromEnv({
            ANTHROPIC_API_KEY: "sk-ant-test",
            ANTHROPIC_BASE_URL: upstream.url,
          }),
          // Renewed and reconciled every 100 ms: a background response below lasts longer.
          responseLeaseMs: 300,
          maxRetries: 0,
        },
      });
      alice = await server.apiKeyFor(uniqueName("alice"));
      bob = await server.apiKeyFor(uniqueName("bob"));
      folder = mkdtempSync(join(tmpdir(), "verbatim-subject-statements-"));
    });
    afterAll(async () => {
      await server?.app.close();
      await upstream?.close();
      await audit?.cleanup();
      if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
    });

    const call = async (
      method: "GET" | "POST" | "DELETE",
      url: string,
      headers: Headers,
      payload?: object,
    ) => server.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    /** The reply's body, after checking its status. */
    const expectStatus = async (
      status: number,
      method: "GET" | "POST" | "DELETE",
      url: string,
      headers: Headers,
      payload?: object,
    ): Promise<Reply> => {
      const reply = await call(method, url, headers, payload);
      expect(reply.statusCode, `${method} ${url}: ${reply.body}`).toBe(status);
      return String(reply.headers["content-type"] ?? "").includes("json")
        ? (reply.json() as Reply)
        : ({} as Reply);
    };
    const create = (body: object, headers: Headers = alice) =>
      expectStatus(200, "POST", "/v1/responses", headers, { model: "claude-test", ...body });

    it("runs the Responses API: chains, forks, streams, background, cancel, images, compress, delete", async () => {
      upstream.reply = () => ({ text: "noted" });
      const first = await create({
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "What is this?" },
              { type: "input_image", image_url: `data:image/png;base64,${PNG_BASE64}` },
            ],
          },
        ],
        metadata: { purpose: "audit" },
      });
      const second = await create({ input: "two", previous_response_id: first.id });
      const third = await create({ input: "three", previous_response_id: second.id });
      // A continuation of an earlier response: a fork.
      const fork = await create({ input: "again", previous_response_id: first.id });
      // Streamed.
      const streamed = await call("POST", "/v1/responses", alice, {
        model: "claude-test",
        input: "stream it",
        previous_response_id: third.id,
        stream: true,
      });
      expect(streamed.statusCode).toBe(200);
      expect(streamed.body).toContain("response.completed");
      // Kept for the operator only.
      await create({ input: "not stored", previous_response_id: fork.id, store: false });

      await expectStatus(200, "GET", `/v1/responses/${third.id}`, alice);
      const replay = await call("GET", `/v1/responses/${third.id}?stream=true`, alice);
      expect(replay.statusCode).toBe(200);
      const items = await expectStatus(200, "GET", `/v1/responses/${third.id}/input_items`, alice);
      expect(items.data.length).toBeGreaterThan(0);
      await call("POST", "/v1/responses/input_tokens", alice, {
        model: "claude-test",
        input: "count me",
        previous_response_id: third.id,
      });

      // In the background, renewed while the model writes, then polled.
      upstream.delayMs = 500;
      const background = await create({
        input: "slowly",
        previous_response_id: third.id,
        background: true,
      });
      // Another, cancelled while it runs.
      const cancelled = await create({
        input: "never mind",
        previous_response_id: third.id,
        background: true,
      });
      await expectStatus(200, "POST", `/v1/responses/${cancelled.id}/cancel`, alice);
      let polled = background;
      while (polled.status === "in_progress" || polled.status === "queued") {
        await new Promise((resolve) => setTimeout(resolve, 50));
        polled = await expectStatus(200, "GET", `/v1/responses/${background.id}`, alice);
      }
      expect(polled.status).toBe("completed");
      upstream.delayMs = 0;

      // Compressed twice with one key: the retry answers the first summary.
      const compress = { summary: "a summary", idempotency_key: "compress-once" };
      const summary = await expectStatus(
        200,
        "POST",
        `/v1/responses/${third.id}/compress`,
        alice,
        compress,
      );
      const retried = await expectStatus(
        200,
        "POST",
        `/v1/responses/${third.id}/compress`,
        alice,
        compress,
      );
      expect(retried.id).toBe(summary.id);
      await create({ input: "after the summary", previous_response_id: summary.id });

      // Another subject's ids are not found.
      await expectStatus(404, "GET", `/v1/responses/${third.id}`, bob);
      await expectStatus(404, "GET", `/v1/responses/${third.id}/input_items`, bob);
      await expectStatus(404, "POST", `/v1/responses/${third.id}/cancel`, bob);
      await expectStatus(404, "DELETE", `/v1/responses/${third.id}`, bob);
      await expectStatus(404, "POST", "/v1/responses", bob, {
        model: "claude-test",
        input: "theirs",
        previous_response_id: third.id,
      });

      // Deleted for the caller: then not found, and not continued.
      await expectStatus(200, "DELETE", `/v1/responses/${second.id}`, alice);
      await expectStatus(404, "GET", `/v1/responses/${second.id}`, alice);
      await expectStatus(404, "POST", "/v1/responses", alice, {
        model: "claude-test",
        input: "gone",
        previous_response_id: second.id,
      });
    });

    it("runs the Conversations API: create, read, update, items, responses in it, delete", async () => {
      const conversation = await expectStatus(200, "POST", "/v1/conversations", alice, {
        metadata: { topic: "audit" },
        items: [{ type: "message", role: "user", content: "first" }],
      });
      await expectStatus(200, "GET", `/v1/conversations/${conversation.id}`, alice);
      await expectStatus(200, "POST", `/v1/conversations/${conversation.id}`, alice, {
        metadata: { topic: "changed" },
      });
      await expectStatus(200, "POST", `/v1/conversations/${conversation.id}/items`, alice, {
        items: [
          { type: "message", role: "assistant", content: "second" },
          { type: "message", role: "user", content: "third" },
        ],
      });
      await create({ input: "in the conversation", conversation: conversation.id });
      await create({
        input: "not stored",
        conversation: conversation.id,
        store: false,
      });
      const listed = await expectStatus(
        200,
        "GET",
        `/v1/conversations/${conversation.id}/items?order=asc`,
        alice,
      );
      const [firstItem, secondItem] = listed.data;
      if (firstItem === undefined || secondItem === undefined) throw new Error("too few items");
      await expectStatus(
        200,
        "GET",
        `/v1/conversations/${conversation.id}/items?limit=1&after=${firstItem.id}`,
        alice,
      );
      await expectStatus(
        200,
        "GET",
        `/v1/conversations/${conversation.id}/items/${secondItem.id}`,
        alice,
      );
      await expectStatus(
        200,
        "DELETE",
        `/v1/conversations/${conversation.id}/items/${secondItem.id}`,
        alice,
      );
      await expectStatus(
        404,
        "GET",
        `/v1/conversations/${conversation.id}/items/${secondItem.id}`,
        alice,
      );
      await expectStatus(200, "GET", `/v1/conversations/${conversation.id}/items`, alice);

      // Another subject's conversation is not found.
      await expectStatus(404, "GET", `/v1/conversations/${conversation.id}`, bob);
      await expectStatus(404, "POST", `/v1/conversations/${conversation.id}`, bob, {
        metadata: { topic: "theirs" },
      });
      await expectStatus(404, "GET", `/v1/conversations/${conversation.id}/items`, bob);
      await expectStatus(404, "DELETE", `/v1/conversations/${conversation.id}`, bob);

      await expectStatus(200, "DELETE", `/v1/conversations/${conversation.id}`, alice);
      await expectStatus(404, "GET", `/v1/conversations/${conversation.id}`, alice);
      await expectStatus(404, "GET", `/v1/conversations/${conversation.id}/items`, alice);
      await expectStatus(404, "POST", "/v1/responses", alice, {
        model: "claude-test",
        input: "in a deleted conversation",
        conversation: conversation.id,
      });
    });

    it("holds, renews, releases and ends response leases", async () => {
      const store = new GatewayMessageStore(audit.database);
      const subject = uniqueName("lease");
      const leases = new ResponseLeases(audit.database, { leaseMilliseconds: 60_000 });
      const start = async (leaseMilliseconds: number) => {
        const [started] = await store.appendMessages(subject, {
          previousMessageId: null,
          messages: [
            {
              role: "assistant",
              content: [{ type: "text", text: "so far" }],
              status: "in_progress",
              leaseMilliseconds,
              leaseHolder: leases.holder,
            },
          ],
        });
        if (started === undefined) throw new Error("nothing appended");
        return started;
      };
      const held = await start(60_000);
      const stuck = await start(60_000);
      const lost: string[] = [];
      leases.hold(subject, held.id, () => lost.push(held.id));
      leases.hold(subject, stuck.id, () => lost.push(stuck.id));
      // Its end could not be written: released, still in_progress, let run out.
      leases.release(stuck.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await leases.renew();
      // The test server reconciles this database every 100 ms too: it may end (or hold locked,
      // skipped here) the stuck response before this call does. Either way it ends, once.
      const ended = await new ResponseLeases(audit.database).endAbandoned();
      expect(ended).not.toContain(held.id);
      await until(
        async () => {
          const message = await store.getMessage(subject, stuck.id);
          return message.status === "incomplete";
        },
        5000,
        10,
        "the stuck response ended",
      );
      const interrupted = await store.getMessage(subject, stuck.id);
      expect(interrupted.metadata.gateway.stopReason).toBe(SERVER_INTERRUPTED);
      expect((await store.getMessage(subject, held.id)).status).toBe("in_progress");
      expect(lost).toEqual([]);
      leases.release(held.id);
      await store.finishMessage(subject, held.id, { status: "completed" });
    });

    it("imports sessions through the gateway's import: again, and a session that grew", async () => {
      const subject = uniqueName("importer");
      const claudeFiles = readdirSync(claudeFolder)
        .filter((name) => name.endsWith(".jsonl"))
        .map((name) => join(claudeFolder, name));
      const imported = await importChainsIntoDatabase(
        audit.database,
        "audit",
        "claude-code",
        subject,
        claudeFiles,
      );
      expect(imported.conversations.some((chain) => chain.outcome === "imported")).toBe(true);
      const again = await importChainsIntoDatabase(
        audit.database,
        "audit",
        "claude-code",
        subject,
        claudeFiles,
      );
      expect(again.conversations.every((chain) => chain.outcome !== "imported")).toBe(true);

      // A Codex session imported half written, then whole: its chain continues.
      const lines = readFileSync(codexFile, "utf8").split("\n");
      const session = join(folder, "rollout.jsonl");
      writeFileSync(session, lines.slice(0, Math.ceil(lines.length / 2)).join("\n"));
      await importChainsIntoDatabase(audit.database, "audit", "codex", subject, [session]);
      writeFileSync(session, lines.join("\n"));
      await importChainsIntoDatabase(audit.database, "audit", "codex", subject, [session]);

      // A batch as the writer thread of an import into a SQLite file writes it (chain-writer-
      // worker.ts: the same writeChainBatch, its contents packed as UTF-8 bytes).
      if (dialect !== "sqlite") return;
      const now = new Date().toISOString();
      const conversationId = uniqueName("conv");
      const text = (words: string) => JSON.stringify([{ type: "text", text: words }]);
      const messages: unknown[] = [
        ...[uniqueName("msg_a"), conversationId, null, "user", text("hello"), 0, 0, now, null],
        ...[uniqueName("msg_b"), conversationId, null, "assistant", text("hi"), 1, 0, now, null],
      ];
      messages[PLANNED_MESSAGE_COLUMNS.length + 2] = messages[0];
      const batch: ChainBatch = {
        conversations: [conversationId, subject, now, JSON.stringify({ source: "audit" })],
        branches: [
          {
            forkId: uniqueName("branch"),
            conversationId,
            parent: null,
            forkDepth: -1,
            tipDepth: 1,
            createdAt: now,
          },
        ],
        messages,
        contents: packContents(messages),
        messageBranches: [0, 0],
        keys: [],
        prefixKeys: [],
      };
      await writeChainBatch(audit.database, subject, batch);
      expectStatementRan(audit, "cast(? as text)");
    });

    it("every statement named the subject, but the reconciliation of expired leases", async () => {
      await expectEveryStatementNamesTheSubject(audit);
      for (const fragment of [
        'into "ai_gateway_messages"',
        "with recursive path",
        'update "ai_gateway_branches" set "tip_depth"',
        'from "ai_gateway_caller_deletions"',
        'from "ai_gateway_idempotency_keys"',
        'from "ai_gateway_images"',
        '"lease_holder" =',
        ACROSS_SUBJECTS,
        'update "ai_gateway_conversations" set "metadata"',
      ]) {
        expectStatementRan(audit, fragment);
      }
    });
  });
}
