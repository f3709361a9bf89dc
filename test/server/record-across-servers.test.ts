/**
 * Issue 34 item 3: recorded calls and responses of several real `verbatim serve` processes on
 * one PostgreSQL database, coordinated through the database only (docs/scale.md, "N servers on
 * one database"). Sessions of one subject whose calls go alternately to three servers, two
 * sessions at once, are each one conversation with every call placed once, in order (each
 * call's previous call is the one before it). A server killed with SIGKILL mid-session leaves
 * calls kept but not placed: another server places them once they are a lease old, and the
 * killed server's in-flight responses end (none stays in_progress). Skipped with a notice
 * without VERBATIM_PG_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { lockSubjectForRecording } from "../../packages/server/src/store/repositories/recorded-calls.js";
import { startServeChild, withoutProviderKeys, type ServeChild } from "../cli/serve-child.js";
import {
  startControlledUpstream,
  type ControlledUpstream,
} from "../support/controlled-upstream.js";
import {
  freshDatabase,
  postgresUrl,
  uniqueName,
  type FreshDatabase,
} from "../support/databases.js";
import { until } from "../support/until.js";

if (postgresUrl === undefined) {
  process.stderr.write(
    "\n[notice] VERBATIM_PG_URL is not set: recorded calls across servers (issue 34 item 3) are SKIPPED.\n\n",
  );
}

const LEASE_MS = 1500;

interface WireMessage {
  readonly role: "user" | "assistant";
  readonly content: unknown;
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body["messages"] as WireMessage[] | undefined) ?? [];
  const last = messages[messages.length - 1];
  if (last === undefined) return "";
  if (typeof last.content === "string") return last.content;
  return (last.content as { type: string; text?: string }[])
    .map((part) => (part.type === "text" ? (part.text ?? "") : ""))
    .join("");
}

/** One agent session: its history grows by a question and the answer at each call. */
class Session {
  readonly messages: WireMessage[] = [];
  calls = 0;
  constructor(readonly name: string) {}

  /** Sends the next call to `server`; resolves once its answer is whole. */
  async next(server: ServeChild, key: string): Promise<void> {
    const question = `${this.name} question ${this.calls}`;
    const messages = [...this.messages, { role: "user" as const, content: question }];
    const reply = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": key,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model: "claude-test",
        max_tokens: 64,
        stream: this.calls % 2 === 0,
        messages,
      }),
    });
    const text = await reply.text();
    expect(reply.status, text).toBe(200);
    this.messages.push(messages[messages.length - 1] as WireMessage, {
      role: "assistant",
      content: `Answer to ${question}`,
    });
    this.calls++;
  }
}

describe.skipIf(postgresUrl === undefined)(
  "issue 34 item 3: recorded calls placed across servers",
  { timeout: 240_000 },
  () => {
    let fresh: FreshDatabase;
    let upstream: ControlledUpstream;
    let servers: ServeChild[] = [];
    beforeAll(async () => {
      fresh = await freshDatabase("postgres");
      upstream = await startControlledUpstream();
      upstream.answer = (writer, body) => {
        const question = lastUserText(body);
        writer.start(String(body["model"]));
        // An answer that never ends: the server is busy (and a response in flight) until killed.
        if (question === "hang") {
          writer.text("half an ans");
          return;
        }
        writer.text(`Answer to ${question}`);
        writer.end();
      };
      const env = {
        ...withoutProviderKeys(process.env),
        VERBATIM_WEB_BUILD: "off",
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
        VERBATIM_RESPONSE_LEASE_MS: String(LEASE_MS),
        VERBATIM_PG_POOL_MAX: "5",
        VERBATIM_RATE_LIMIT_PER_MINUTE: "0",
      };
      servers = await Promise.all(
        [1, 2, 3].map(() => startServeChild(["--db", fresh.locationText], env)),
      );
    });
    afterAll(async () => {
      for (const server of servers) server.child.kill("SIGKILL");
      await Promise.all(servers.map((server) => server.exited));
      await upstream?.close();
      await fresh?.cleanup();
    });

    const callsOf = (subject: string) =>
      fresh.database.db
        .selectFrom("ai_gateway_recorded_calls")
        .select([
          "id",
          "conversation_id",
          "previous_call_id",
          "matched_count",
          "message_count",
          "created_at",
        ])
        .where("subject_uid", "=", subject)
        .orderBy("created_at")
        .orderBy("id")
        .execute();

    const inProgressOf = async (subject: string) =>
      (
        await fresh.database.db
          .selectFrom("ai_gateway_messages")
          .select("id")
          .where("subject_uid", "=", subject)
          .where("status", "=", "in_progress")
          .execute()
      ).length;
    const allPlaced = async (subject: string) =>
      (await callsOf(subject)).every((call) => call.conversation_id !== "");

    /**
     * Every call placed once, in order: one conversation per session, whose calls (in the order
     * they were sent) each continue the one before, and whose messages are each question and
     * answer once.
     */
    async function expectPlacedInOrder(subject: string, sessions: readonly Session[]) {
      const calls = await callsOf(subject);
      expect(calls.length).toBe(sessions.reduce((sum, session) => sum + session.calls, 0));
      expect(calls.filter((call) => call.conversation_id === "")).toEqual([]);
      const byConversation = new Map<string, typeof calls>();
      for (const call of calls) {
        const list = byConversation.get(call.conversation_id) ?? [];
        list.push(call);
        byConversation.set(call.conversation_id, list);
      }
      expect([...byConversation.values()].map((list) => list.length).sort()).toEqual(
        sessions.map((session) => session.calls).sort(),
      );
      for (const [conversationId, list] of byConversation) {
        // Each call's request: the previous one's messages (stored: matched), its answer and a
        // new question.
        expect(list.map((call) => [call.message_count, call.matched_count])).toEqual(
          list.map((_, index) => [2 * index + 1, Math.max(0, 2 * index - 1)]),
        );
        expect(list.map((call) => call.previous_call_id)).toEqual([
          null,
          ...list.slice(0, -1).map((call) => call.id),
        ]);
        const messages = await fresh.database.db
          .selectFrom("ai_gateway_messages")
          .select(["role", "content"])
          .where("conversation_id", "=", conversationId)
          .execute();
        expect(messages.length).toBe(2 * list.length);
      }
    }

    it("issue 34 item 3: one subject's sessions sent alternately to three servers, two at once, are placed once each, in order", async () => {
      const subject = uniqueName("across");
      const { key } = await createApiKey(fresh.database, subject);
      const sessions = [new Session("first"), new Session("second")];
      const steps = 12;
      await Promise.all(
        sessions.map(async (session, which) => {
          for (let step = 0; step < steps; step++) {
            await session.next(servers[(step + which) % servers.length] as ServeChild, key);
          }
        }),
      );
      await until(() => allPlaced(subject), 20_000, 50);
      await expectPlacedInOrder(subject, sessions);
    });

    it("issue 34 item 3: a server killed with SIGKILL mid-session: another places the calls it kept, and its responses end", async () => {
      const subject = uniqueName("killed");
      const { key } = await createApiKey(fresh.database, subject);
      const [survivor, other, killed] = servers as [ServeChild, ServeChild, ServeChild];
      const sessions = [new Session("alpha"), new Session("beta"), new Session("gamma")];
      for (let step = 0; step < 4; step++) {
        for (const session of sessions) {
          await session.next([survivor, killed, other][step % 3] as ServeChild, key);
        }
      }
      // The killed server is kept busy (a recorded answer still streaming, of another subject,
      // and two responses in flight): a call it keeps is placed only 100 ms later, once quiet.
      const { key: busyKey } = await createApiKey(fresh.database, uniqueName("busy"));
      const streaming = fetch(`${killed.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": busyKey, "content-type": "application/json" },
        body: JSON.stringify({
          model: "claude-test",
          max_tokens: 64,
          stream: true,
          messages: [{ role: "user", content: "hang" }],
        }),
      })
        .then((reply) => reply.text())
        .catch(() => "connection lost");
      const hanging = [true, false].map((stream) =>
        fetch(`${killed.url}/v1/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "claude-test", input: "hang", stream }),
        })
          .then((reply) => reply.text())
          .catch(() => "connection lost"),
      );
      await until(async () => (await inProgressOf(subject)) === 2, 10_000, 20);
      // Each session's next call goes to the killed server, which is killed as soon as their
      // answers are whole (their bytes committed, their placing not run yet: the subject's
      // placing lock is held here until the kill, so none of them can be placed before it).
      let release = () => undefined as void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked = () => undefined as void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const holding = fresh.database.db.transaction().execute(async (trx) => {
        await lockSubjectForRecording(trx, subject);
        locked();
        await released;
      });
      await lockTaken;
      try {
        await Promise.all(sessions.map((session) => session.next(killed, key)));
        killed.child.kill("SIGKILL");
        await killed.exited;
      } finally {
        release();
        await holding;
      }
      await Promise.allSettled([streaming, ...hanging]);
      const leftAtKill = (await callsOf(subject)).filter((call) => call.conversation_id === "");
      process.stderr.write(
        `[issue 34 item 3] calls kept but not placed by the killed server: ${leftAtKill.length}\n`,
      );
      expect(leftAtKill.length).toBeGreaterThanOrEqual(sessions.length);
      // Placed by a running server once a lease old, without the sessions going on.
      const killedAt = Date.now();
      await until(() => allPlaced(subject), 15_000, 50);
      process.stderr.write(
        `[issue 34 item 3] left calls placed ${Date.now() - killedAt} ms after the kill (lease ${LEASE_MS} ms)\n`,
      );
      // The killed server's responses ended, none in_progress.
      await until(async () => (await inProgressOf(subject)) === 0, 15_000, 50);
      const ended = await fresh.database.db
        .selectFrom("ai_gateway_messages")
        .select("status")
        .where("subject_uid", "=", subject)
        .where("role", "=", "assistant")
        .where("conversation_id", "not in", (query) =>
          query
            .selectFrom("ai_gateway_recorded_calls")
            .select("conversation_id")
            .where("subject_uid", "=", subject),
        )
        .execute();
      expect(ended.map((row) => row.status)).toEqual(["incomplete", "incomplete"]);
      // The sessions go on on the running servers: one chain each, every call once, in order.
      for (const session of sessions) {
        await session.next(survivor, key);
        await session.next(other, key);
      }
      await until(() => allPlaced(subject), 20_000, 50);
      await expectPlacedInOrder(subject, sessions);
    });
  },
);
