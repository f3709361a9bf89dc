/**
 * Issue 18: conversations recorded before migration 0010 (which wrote chain nodes and the calls'
 * bytes, no gateway messages, and nodes that name none). What broke: the Conversations API and
 * the console showed them empty, and a call continuing one after the upgrade wrote its new
 * messages as a chain of their own from no message (the history before it missing). Migration
 * 0012 lists them and the gateway writes their history from the calls' stored bytes
 * (gateway/recording/backfill.ts, run at `verbatim serve` start and by `verbatim db migrate`).
 * Here a database is migrated to 0009, an Anthropic session (two turns and a fork) and a Chat
 * call are written as 0009's recorder wrote them (the upstream's real bytes), the database is
 * migrated to the newest migration and backfilled, and the conversations are shown, matched and
 * continued exactly as the same calls recorded now: on SQLite and PostgreSQL.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { Kysely } from "kysely";
import { bufferIO, main } from "verbatim-llm/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  messageHash,
  prefixHashes,
} from "../../packages/server/src/gateway/recording/chain-matching.js";
import { newId } from "../../packages/server/src/gateway/ids.js";
import { backfillRecordedHistory } from "../../packages/server/src/gateway/recording/backfill.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { storeMigrations } from "../../packages/server/src/store/migrations/index.js";
import {
  freshDatabase,
  postgresUrl,
  testDialects,
  uniqueName,
  type FreshDatabase,
} from "../support/databases.js";
import { callsPlaced } from "../support/recorded-calls.js";
import { startRawUpstreamServer, type RawUpstreamServer } from "../support/raw-upstream-server.js";

type Format = "anthropic-messages" | "openai-chat";
interface Item {
  readonly type: string;
  readonly role?: string;
  readonly content?: { readonly text?: string }[];
}

const MIGRATIONS_AT_0009 = storeMigrations.slice(0, 9);

/** When 0009's recorder wrote each call (one second apart, in order). */
let clock = Date.UTC(2026, 11, 1, 17, 0, 0);

/**
 * Records one call as the recorder of migration 0009 did (commit 278fde5): the longest stored
 * prefix names the conversation, the messages past it become chain nodes (no message ids), and
 * the call's row keeps the bytes. No gateway message is written.
 */
async function recordAs0009(
  db: Kysely<any>,
  subject: string,
  format: Format,
  request: { readonly messages: readonly unknown[] },
  response: { readonly headers: Record<string, string>; readonly body: Buffer; status: number },
): Promise<string> {
  const createdAt = new Date((clock += 1000)).toISOString();
  const hashes = prefixHashes(format, request.messages);
  const deepest = await db
    .selectFrom("ai_gateway_chain_nodes")
    .select(["conversation_id", "position"])
    .where("subject_uid", "=", subject)
    .where("prefix_sha256", "in", hashes)
    .orderBy("position", "desc")
    .limit(1)
    .executeTakeFirst();
  const matched = deepest === undefined ? 0 : Number(deepest.position) + 1;
  let conversationId: string | undefined = deepest?.conversation_id;
  if (conversationId === undefined) {
    conversationId = newId("conv", clock);
    await db
      .insertInto("ai_gateway_conversations")
      .values({
        id: conversationId,
        subject_uid: subject,
        created_at: createdAt,
        metadata: JSON.stringify({ recorded: format }),
      })
      .execute();
  }
  for (let position = matched; position < hashes.length; position++) {
    await db
      .insertInto("ai_gateway_chain_nodes")
      .values({
        subject_uid: subject,
        prefix_sha256: hashes[position],
        conversation_id: conversationId,
        parent_prefix_sha256: position === 0 ? null : hashes[position - 1],
        position,
        message_sha256: messageHash(request.messages[position]),
        created_at: createdAt,
      })
      .execute();
  }
  const previous = await db
    .selectFrom("ai_gateway_recorded_calls")
    .select("id")
    .where("subject_uid", "=", subject)
    .where("tip_prefix_sha256", "in", hashes)
    .orderBy("message_count", "desc")
    .orderBy("created_at", "desc")
    .limit(1)
    .executeTakeFirst();
  await db
    .insertInto("ai_gateway_recorded_calls")
    .values({
      id: newId("call", clock),
      subject_uid: subject,
      conversation_id: conversationId,
      wire_format: format,
      path: format === "anthropic-messages" ? "/v1/messages" : "/v1/chat/completions",
      model: "claude-test",
      tip_prefix_sha256: hashes[hashes.length - 1] ?? "",
      message_count: hashes.length,
      matched_count: matched,
      previous_call_id: previous?.id ?? null,
      status_code: response.status,
      request_headers: JSON.stringify({ "content-type": "application/json" }),
      request_body: JSON.stringify(request),
      response_headers: JSON.stringify(response.headers),
      response_body_base64: response.body.toString("base64"),
      redacted: 0,
      input_tokens: null,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      duration_ms: 5,
      created_at: createdAt,
    })
    .execute();
  return conversationId;
}

for (const dialect of testDialects) {
  const skip = dialect === "postgres" && postgresUrl === undefined;
  (skip ? describe.skip : describe)(
    `conversations recorded before migration 0010 [${dialect}]`,
    () => {
      let fresh: FreshDatabase;
      let started: RawUpstreamServer;
      const oldSubject = uniqueName("before-0010");
      const newSubject = uniqueName("after-0010");
      let anthropicId = "";
      let chatId = "";

      const u1: Anthropic.MessageParam = { role: "user", content: "Hello" };
      const u2: Anthropic.MessageParam = {
        role: "user",
        content: [{ type: "text", text: "More" }],
      };
      const fork: Anthropic.MessageParam = { role: "user", content: "Something else" };
      const answer: Anthropic.MessageParam = {
        role: "assistant",
        content: [{ type: "text", text: "stub answer" }],
      };
      const anthropicCalls = [
        { model: "claude-test", max_tokens: 100, messages: [u1] },
        { model: "claude-test", max_tokens: 100, messages: [u1, answer, u2], stream: true },
        { model: "claude-test", max_tokens: 100, messages: [u1, answer, fork] },
      ];
      const chatCall = {
        model: "gpt-test",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hi" },
        ],
      };

      /** The upstream's real answer to a body (what the route passed back and recorded). */
      async function upstreamAnswer(path: string, body: unknown) {
        const response = await fetch(`${started.upstream.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const headers: Record<string, string> = {};
        response.headers.forEach((value, name) => (headers[name] = value));
        return {
          headers,
          body: Buffer.from(await response.arrayBuffer()),
          status: response.status,
        };
      }

      beforeAll(async () => {
        fresh = await freshDatabase(dialect, { migrate: false });
        await migrateDatabase(fresh.database, MIGRATIONS_AT_0009);
        started = await startRawUpstreamServer(fresh.database);
        const db = fresh.database.db as Kysely<any>;
        for (const body of anthropicCalls) {
          const answered = await upstreamAnswer("/v1/messages", body);
          anthropicId = await recordAs0009(db, oldSubject, "anthropic-messages", body, answered);
        }
        const answered = await upstreamAnswer("/v1/chat/completions", chatCall);
        chatId = await recordAs0009(db, oldSubject, "openai-chat", chatCall, answered);
        await migrateDatabase(fresh.database);
      });
      afterAll(async () => {
        await started?.close();
        await fresh?.cleanup();
      });

      async function items(subject: string, conversationId: string): Promise<string[]> {
        const { authorization } = await started.server.apiKeyFor(subject);
        const response = await fetch(
          `${started.baseUrl}/v1/conversations/${conversationId}/items?order=asc&limit=100`,
          { headers: { authorization } },
        );
        expect(response.status).toBe(200);
        const list = (await response.json()) as { data: Item[] };
        return list.data.map(
          (item) =>
            `${item.role ?? item.type}: ${(item.content ?? []).map((part) => part.text).join("")}`,
        );
      }

      const conversationsOf = async (subject: string) =>
        new Set(
          (
            await fresh.database.db
              .selectFrom("ai_gateway_recorded_calls")
              .select("conversation_id")
              .where("subject_uid", "=", subject)
              .execute()
          ).map((row) => row.conversation_id),
        );

      it("after the migration they are listed, and shown empty until their history is written", async () => {
        const listed = await fresh.database.db
          .selectFrom("ai_gateway_history_backfills")
          .select("conversation_id")
          .where("subject_uid", "=", oldSubject)
          .orderBy("conversation_id")
          .execute();
        expect(listed.map((row) => row.conversation_id)).toEqual([anthropicId, chatId].sort());
        expect(await items(oldSubject, anthropicId)).toEqual([]);
      });

      it("verbatim db migrate writes their history from the stored bytes, once, nodes naming their messages", async () => {
        // `verbatim db migrate` (and `verbatim serve` at start) runs it after the migrations.
        const io = bufferIO();
        expect(await main(["db", "migrate", "--db", fresh.locationText], io)).toBe(0);
        expect(io.out().toString()).toContain(
          "wrote the history of 2 conversation(s) recorded before migration 0010 (4 call(s))",
        );
        expect(await backfillRecordedHistory(fresh.database)).toEqual({
          conversations: 0,
          calls: 0,
        });
        const unnamed = await fresh.database.db
          .selectFrom("ai_gateway_chain_nodes")
          .select("prefix_sha256")
          .where("subject_uid", "=", oldSubject)
          .where("message_id", "is", null)
          .execute();
        expect(unnamed).toEqual([]);
        // The fork's branch is the newest: the conversation shows it.
        expect(await items(oldSubject, anthropicId)).toEqual([
          "user: Hello",
          "assistant: stub answer",
          "user: Something else",
          "assistant: stub answer",
        ]);
        expect(await items(oldSubject, chatId)).toEqual([
          "system: Be brief.",
          "user: Hi",
          "assistant: stub answer",
        ]);
      });

      it("they are matched and continued exactly as the same calls recorded now", async () => {
        // The same calls, recorded now by a new subject.
        const { key: newKey } = await started.server.apiKeyFor(newSubject);
        for (const body of anthropicCalls) {
          const response = await fetch(`${started.baseUrl}/v1/messages`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": newKey },
            body: JSON.stringify(body),
          });
          expect(response.status).toBe(200);
          await response.arrayBuffer();
        }
        await callsPlaced(fresh.database, newSubject, 3);
        const [newId] = [...(await conversationsOf(newSubject))] as [string];
        // Both sessions continue their first branch with a third turn.
        const next = [u1, answer, u2, answer, { role: "user" as const, content: "Third" }];
        for (const subject of [oldSubject, newSubject]) {
          const { key } = await started.server.apiKeyFor(subject);
          const client = new Anthropic({ apiKey: key, baseURL: started.baseUrl, maxRetries: 0 });
          await client.messages.create({ model: "claude-test", max_tokens: 100, messages: next });
        }
        await callsPlaced(fresh.database, oldSubject, 5);
        await callsPlaced(fresh.database, newSubject, 4);
        const matched = async (subject: string) =>
          (
            await fresh.database.db
              .selectFrom("ai_gateway_recorded_calls")
              .select("matched_count")
              .where("subject_uid", "=", subject)
              .where("message_count", "=", 5)
              .executeTakeFirstOrThrow()
          ).matched_count;
        expect(await matched(oldSubject)).toBe(3);
        expect(await matched(newSubject)).toBe(3);
        expect(await conversationsOf(oldSubject)).toEqual(new Set([anthropicId, chatId]));
        const shown = await items(oldSubject, anthropicId);
        expect(shown).toEqual([
          "user: Hello",
          "assistant: stub answer",
          "user: More",
          "assistant: stub answer",
          "user: Third",
          "assistant: stub answer",
        ]);
        expect(shown).toEqual(await items(newSubject, newId));
        // One chain: each message continues the one before (no second copy of an answer).
        const shape = async (subject: string, conversationId: string) => {
          const rows = await fresh.database.db
            .selectFrom("ai_gateway_messages")
            .select(["id", "previous_message_id", "role"])
            .where("subject_uid", "=", subject)
            .where("conversation_id", "=", conversationId)
            .orderBy("depth")
            .orderBy("created_at")
            .execute();
          const position = new Map(rows.map((row, index) => [row.id, index]));
          return rows.map(
            (row) => `${row.role}<-${position.get(row.previous_message_id ?? "") ?? "none"}`,
          );
        };
        expect(await shape(oldSubject, anthropicId)).toEqual(await shape(newSubject, newId));
      });
    },
  );
}
