import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import { startAfterUser } from "../../../../../test/support/gateway-chains.js";
import type { Message } from "verbatim-llm/history";
import {
  MESSAGE_STATUS_VALUES,
  MESSAGE_TYPE_VALUES,
} from "../../store/repositories/gateway-messages.js";
import { appendChain } from "./append.js";
import { GatewayMessageStore, type AppendMessageInput } from "./message-store.js";
import { FINAL_STATUSES, ROLE_OF_TYPE } from "./message-types.js";

const say = (role: "user" | "assistant", text: string): AppendMessageInput => ({
  role,
  content: [{ type: "text", text }],
});
const texts = (messages: readonly { content: Message["content"] }[]) =>
  messages.map((message) => (message.content[0]?.type === "text" ? message.content[0].text : "?"));

describeEachDialect("gateway chains", (getDatabase) => {
  const store = () => new GatewayMessageStore(getDatabase());

  it("B1 B3 stores a turn as rows of ai_gateway_messages with content as JSON blocks", async () => {
    const subject = uniqueName("subject");
    const [user, assistant] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [
        say("user", "What is 2 + 2?"),
        {
          role: "assistant",
          content: [{ type: "text", text: "4" }],
          gateway: { model: "m-1", provider: "anthropic", providerResponseId: "resp_x" },
        },
      ],
    });
    expect(user?.previousMessageId).toBeNull();
    expect(assistant?.previousMessageId).toBe(user?.id);
    expect(assistant?.type).toBe("assistant");
    expect(assistant?.role).toBe("assistant");
    expect(assistant?.status).toBe("completed");
    const raw = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .selectAll()
      .where("id", "=", assistant?.id ?? "")
      .executeTakeFirstOrThrow();
    expect(raw.subject_uid).toBe(subject);
    expect(raw.conversation_id).toBe(user?.conversationId);
    expect(raw.previous_message_id).toBe(user?.id);
    expect(JSON.parse(raw.content)).toEqual([{ type: "text", text: "4" }]);
    expect(JSON.parse(raw.metadata)).toEqual({
      caller: {},
      gateway: { model: "m-1", provider: "anthropic", providerResponseId: "resp_x" },
    });
    // content is a JSON value in the database, not a string holding JSON text
    const type = await sql<{ kind: string }>`select ${sql.raw(
      getDatabase().capabilities.dialect === "postgres"
        ? "json_typeof(content)"
        : "json_type(content)",
    )} as kind from ai_gateway_messages where id = ${assistant?.id ?? ""}`.execute(
      getDatabase().db,
    );
    expect(type.rows[0]?.kind).toBe("array");
  });

  it("B4 reads the context of any anchor: its chain back to the start, in order", async () => {
    const subject = uniqueName("subject");
    const first = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "u1"), say("assistant", "a1")],
    });
    const second = await store().appendMessages(subject, {
      previousMessageId: first[1]?.id ?? "",
      messages: [say("user", "u2"), say("assistant", "a2")],
    });
    const tip = second[1]?.id ?? "";
    const context = await store().readContext(subject, tip);
    expect(texts(context.messages)).toEqual(["u1", "a1", "u2", "a2"]);
    expect(context.anchor.id).toBe(tip);
    const middle = await store().readContext(subject, first[1]?.id ?? "");
    expect(texts(middle.messages)).toEqual(["u1", "a1"]);
    expect(context.messages.map((message) => message.depth)).toEqual([0, 1, 2, 3]);
    expect(new Set(context.messages.map((m) => m.conversationId)).size).toBe(1);
  });

  it("B4 two continuations of one anchor are sibling forks; both stay readable", async () => {
    const subject = uniqueName("subject");
    const base = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "u1"), say("assistant", "a1"), say("user", "u2")],
    });
    const anchor = base[1]?.id ?? "";
    const fork = await store().appendMessages(subject, {
      previousMessageId: anchor,
      messages: [say("user", "u2 edited"), say("assistant", "a2 edited")],
    });
    const forkOfFork = await store().appendMessages(subject, {
      previousMessageId: fork[0]?.id ?? "",
      messages: [say("assistant", "a2 again")],
    });
    const main = await store().appendMessages(subject, {
      previousMessageId: base[2]?.id ?? "",
      messages: [say("assistant", "a2")],
    });
    expect(texts((await store().readContext(subject, main[0]?.id ?? "")).messages)).toEqual([
      "u1",
      "a1",
      "u2",
      "a2",
    ]);
    expect(texts((await store().readContext(subject, fork[1]?.id ?? "")).messages)).toEqual([
      "u1",
      "a1",
      "u2 edited",
      "a2 edited",
    ]);
    expect(texts((await store().readContext(subject, forkOfFork[0]?.id ?? "")).messages)).toEqual([
      "u1",
      "a1",
      "u2 edited",
      "a2 again",
    ]);
    expect(await store().listContinuations(subject, anchor)).toEqual(
      expect.arrayContaining([base[2]?.id, fork[0]?.id]),
    );
    const all = await store().listMessages(subject, base[0]?.conversationId ?? "");
    expect(all).toHaveLength(7);
  });

  it("B4 a context read returns every message exactly as a read of that message alone", async () => {
    const subject = uniqueName("subject");
    let clock = Date.UTC(2026, 10, 30, 12);
    const timed = new GatewayMessageStore(getDatabase(), { now: () => new Date((clock += 1000)) });
    const base = await timed.appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "u1"), say("assistant", "a1"), say("user", "u2")],
    });
    const fork = await timed.appendMessages(subject, {
      previousMessageId: base[1]?.id ?? "",
      messages: [say("user", "u2 edited")],
    });
    const started = await timed.startMessage(subject, {
      previousMessageId: fork[0]?.id ?? "",
      message: { role: "assistant", content: [], metadata: { trace: "t" } },
    });
    // Finished later than it started: its updatedAt differs from its createdAt.
    await timed.finishMessage(subject, started.id, {
      status: "completed",
      content: [{ type: "toolCall", id: "c1", name: "look", arguments: "{}" }],
      gateway: { model: "m" },
    });
    const tail = await timed.appendMessages(subject, {
      previousMessageId: started.id,
      messages: [
        {
          role: "tool",
          content: [
            { type: "toolResult", callID: "c1", toolName: "look", isError: false, content: "ok" },
          ],
        },
      ],
    });
    const context = await timed.readContext(subject, tail[0]?.id ?? "");
    expect(texts(context.messages.slice(0, 3))).toEqual(["u1", "a1", "u2 edited"]);
    const alone = await Promise.all(
      context.messages.map((message) => timed.getMessage(subject, message.id)),
    );
    expect(context.messages).toEqual(alone);
    expect(context.messages.map((message) => message.previousMessageId)).toEqual([
      null,
      base[0]?.id,
      base[1]?.id,
      fork[0]?.id,
      started.id,
    ]);
    const finished = context.messages[3];
    expect(finished?.updatedAt).not.toBe(finished?.createdAt);
    expect(finished?.role).toBe("assistant");
    expect(context.messages[4]?.role).toBe("tool");
    expect(await timed.readFullChain(subject, tail[0]?.id ?? "")).toEqual(alone);
  });

  it("B4 concurrent continuations of one anchor both land, as forks", async () => {
    const subject = uniqueName("subject");
    const [root] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "root")],
    });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        store().appendMessages(subject, {
          previousMessageId: root?.id ?? "",
          messages: [say("assistant", `answer ${index}`), say("user", `next ${index}`)],
        }),
      ),
    );
    for (const [index, result] of results.entries()) {
      const context = await store().readContext(subject, result[1]?.id ?? "");
      expect(texts(context.messages)).toEqual(["root", `answer ${index}`, `next ${index}`]);
    }
    expect(await store().listContinuations(subject, root?.id ?? "")).toHaveLength(6);
  });

  it("B4 an append that fails part way writes nothing (one statement on PostgreSQL, one transaction on SQLite)", async () => {
    const subject = uniqueName("subject");
    const [root] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "root")],
    });
    const rows = async () =>
      Number(
        (
          await sql<{
            n: number;
          }>`select (select count(*) from ai_gateway_messages where subject_uid = ${subject}) + (select count(*) from ai_gateway_branches where subject_uid = ${subject}) as n`.execute(
            getDatabase().db,
          )
        ).rows[0]?.n,
      );
    const branch = await getDatabase()
      .db.selectFrom("ai_gateway_branches")
      .select(["id", "tip_depth"])
      .where("subject_uid", "=", subject)
      .executeTakeFirstOrThrow();
    const before = await rows();
    // Anchor facts of a message that does not exist, on the root's real branch: the claim of
    // the branch's tip succeeds, then the messages' reference to their anchor fails.
    const message = {
      type: "user" as const,
      role: "user" as const,
      status: "completed" as const,
      content: '[{"text":"lost","type":"text"}]',
      blocks: [{ type: "text" as const, text: "lost" }],
      metadata: '{"caller":{},"gateway":{}}',
      metadataValue: { caller: {}, gateway: {} },
      startsContext: false,
      request: null,
    };
    await expect(
      appendChain(getDatabase(), {
        subjectUid: subject,
        conversationId: undefined,
        previousMessageId: "msg_does_not_exist",
        knownAnchor: {
          id: "msg_does_not_exist",
          conversation_id: root?.conversationId ?? "",
          branch_id: branch.id,
          depth: 0,
          context_start_depth: 0,
          status: "completed",
        },
        messages: [message, message],
        conversationMetadata: {},
        now: new Date().toISOString(),
      }),
    ).rejects.toThrow();
    expect(await rows()).toBe(before);
    // The claim was undone with the rest: the branch still ends at the root.
    expect(
      await getDatabase()
        .db.selectFrom("ai_gateway_branches")
        .select(["id", "tip_depth"])
        .where("subject_uid", "=", subject)
        .execute(),
    ).toEqual([branch]);
  });

  it("B4 a write of many messages chains them in order, also as a fork", async () => {
    const subject = uniqueName("subject");
    const many = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, index) =>
        say(index % 2 === 0 ? "user" : "assistant", `${prefix} ${index}`),
      );
    const written = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: many("m", 20),
    });
    expect(texts((await store().readContext(subject, written[19]?.id ?? "")).messages)).toEqual(
      many("m", 20).map((message) => (message.content[0] as { text: string }).text),
    );
    const fork = await store().appendMessages(subject, {
      previousMessageId: written[9]?.id ?? "",
      messages: many("f", 12),
    });
    const context = await store().readContext(subject, fork[11]?.id ?? "");
    expect(texts(context.messages)).toEqual([...texts(written.slice(0, 10)), ...texts(fork)]);
    expect(context.messages.map((message) => message.depth)).toEqual(
      Array.from({ length: 22 }, (_, index) => index),
    );
  });

  it("B4 a new chain can start in an existing conversation", async () => {
    const subject = uniqueName("subject");
    const conversation = await store().createConversation(subject, { metadata: { app: "t" } });
    const [one] = await store().appendMessages(subject, {
      previousMessageId: null,
      conversationId: conversation.id,
      messages: [say("user", "first")],
    });
    const [two] = await store().appendMessages(subject, {
      previousMessageId: null,
      conversationId: conversation.id,
      messages: [say("user", "second start")],
    });
    expect(one?.conversationId).toBe(conversation.id);
    expect(texts((await store().readContext(subject, two?.id ?? "")).messages)).toEqual([
      "second start",
    ]);
    expect((await store().getConversation(subject, conversation.id)).metadata).toEqual({
      app: "t",
    });
  });

  it("B3 lifecycle: in_progress is written at start, then only status and final content change", async () => {
    const subject = uniqueName("subject");
    const [user] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "hello")],
    });
    const started = await store().startMessage(subject, {
      previousMessageId: user?.id ?? "",
      message: {
        role: "assistant",
        content: [],
        metadata: { trace: "t-1" },
        gateway: { model: "m" },
      },
    });
    expect(started.status).toBe("in_progress");
    // A crash now leaves a visible in_progress row, not a hole.
    expect((await store().getMessage(subject, started.id)).status).toBe("in_progress");
    await expect(
      store().appendMessages(subject, {
        previousMessageId: started.id,
        messages: [say("user", "too early")],
      }),
    ).rejects.toMatchObject({ code: "gateway_anchor_in_progress" });

    const finished = await store().finishMessage(subject, started.id, {
      status: "completed",
      content: [{ type: "text", text: "hi" }],
      gateway: {
        usage: { input: 5, output: 1, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
      },
    });
    expect(finished.status).toBe("completed");
    expect(finished.content).toEqual([{ type: "text", text: "hi" }]);
    expect(finished.metadata.caller).toEqual({ trace: "t-1" });
    expect(finished.metadata.gateway.model).toBe("m");
    expect(finished.metadata.gateway.usage?.input).toBe(5);
    expect(finished.previousMessageId).toBe(user?.id);
    expect(finished.createdAt).toBe(started.createdAt);
    await expect(
      store().finishMessage(subject, started.id, { status: "failed" }),
    ).rejects.toMatchObject({ code: "gateway_message_not_in_progress" });
    expect((await store().getMessage(subject, started.id)).status).toBe("completed");
  });

  it("B3 a message started and finished by one store is stored exactly as the checked path stores it", async () => {
    const subject = uniqueName("subject");
    const one = store();
    const { started } = await startAfterUser(one, subject, "go", {
      role: "assistant",
      content: [{ type: "text", text: "draft" }],
      metadata: { trace: "t-2" },
      gateway: { model: "m", provider: "anthropic" },
    });
    // The caller owns what it got back: changing it changes nothing stored.
    (started.metadata.caller as Record<string, string>)["trace"] = "changed by the caller";
    const finished = await one.finishMessage(subject, started.id, {
      status: "completed",
      content: [{ type: "text", text: "final" }],
      gateway: {
        usage: { input: 3, output: 2, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
      },
    });
    expect(await store().getMessage(subject, started.id)).toEqual(finished);
    expect(finished.metadata).toEqual({
      caller: { trace: "t-2" },
      gateway: {
        model: "m",
        provider: "anthropic",
        usage: { input: 3, output: 2, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
      },
    });
    await expect(
      one.finishMessage(subject, started.id, { status: "failed" }),
    ).rejects.toMatchObject({ code: "gateway_message_not_in_progress" });

    // Finished by another store (another server) first: this store's finish changes nothing.
    const second = await one.startMessage(subject, {
      previousMessageId: finished.id,
      message: { role: "assistant", content: [] },
    });
    await store().finishMessage(subject, second.id, { status: "cancelled" });
    await expect(
      one.finishMessage(subject, second.id, {
        status: "completed",
        content: [{ type: "text", text: "late" }],
      }),
    ).rejects.toMatchObject({ code: "gateway_message_not_in_progress" });
    const kept = await store().getMessage(subject, second.id);
    expect(kept.status).toBe("cancelled");
    expect(kept.content).toEqual([]);
    // Another subject cannot finish it through the store that started it.
    const third = await one.startMessage(subject, {
      previousMessageId: kept.id,
      message: { role: "assistant", content: [] },
    });
    await expect(
      one.finishMessage(uniqueName("other"), third.id, { status: "completed" }),
    ).rejects.toMatchObject({ code: "gateway_message_not_found" });
    expect((await one.finishMessage(subject, third.id, { status: "completed" })).status).toBe(
      "completed",
    );
  });

  it("B3 a finish's content is checked (nothing changes when it is wrong) and kept as a copy", async () => {
    const subject = uniqueName("subject");
    const one = store();
    const { started } = await startAfterUser(one, subject, "go");
    for (const [content, where] of [
      [[{ type: "text", text: 42 }], "content[0].text"],
      [[{ type: "text", text: "x", extra: true }], "content[0]"],
      [{ type: "text", text: "not a list" }, "content"],
    ] as const) {
      await expect(
        one.finishMessage(subject, started.id, {
          status: "completed",
          content: content as never,
        }),
      ).rejects.toMatchObject({ code: "gateway_input_invalid", where });
    }
    expect((await store().getMessage(subject, started.id)).status).toBe("in_progress");
    const content = [{ type: "text" as const, text: "final" }];
    const finished = await one.finishMessage(subject, started.id, {
      status: "completed",
      content,
    });
    // The caller's blocks stay the caller's: changing them afterwards changes nothing kept.
    content[0]!.text = "changed by the caller";
    expect(Object.isFrozen(content[0])).toBe(false);
    expect(finished.content).toEqual([{ type: "text", text: "final" }]);
    expect((await one.readContext(subject, started.id)).anchor.content).toEqual([
      { type: "text", text: "final" },
    ]);
  });

  it("B3 every final status can end a message, and a failed message keeps its content", async () => {
    const subject = uniqueName("subject");
    const [user] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "go")],
    });
    for (const status of ["failed", "incomplete", "cancelled", "completed"] as const) {
      const started = await store().startMessage(subject, {
        previousMessageId: user?.id ?? "",
        message: { role: "assistant", content: [{ type: "text", text: "partial" }] },
      });
      const done = await store().finishMessage(subject, started.id, {
        status,
        ...(status === "failed" ? { gateway: { error: { code: "x", message: "boom" } } } : {}),
      });
      expect(done.status).toBe(status);
      expect(done.content).toEqual([{ type: "text", text: "partial" }]);
    }
  });

  it("B3 a row changed outside the store is reported on read, not passed on", async () => {
    const subject = uniqueName("subject");
    const [message] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "fine")],
    });
    const id = message?.id ?? "";
    for (const content of [
      '[{"type":"thinking","text":"x"}]',
      '{"not":"blocks"}',
      '[{"type":"toolCall","id":"c","name":"n"}]',
      '[{"type":"text","text":"x","extra":true}]',
      // PostgreSQL's json column refuses text that is not JSON; SQLite keeps it.
      ...(getDatabase().capabilities.dialect === "sqlite" ? ["[{]"] : []),
    ]) {
      await getDatabase()
        .db.updateTable("ai_gateway_messages")
        .set({ content })
        .where("id", "=", id)
        .execute();
      await expect(store().getMessage(subject, id)).rejects.toMatchObject({
        code: "store_row_invalid",
      });
      await expect(store().readContext(subject, id)).rejects.toMatchObject({
        code: "store_row_invalid",
      });
    }
  });

  /** A stored message whose row is then changed behind the store's back. */
  const changedBehindTheStore = async (change: Record<string, string>) => {
    const subject = uniqueName("subject");
    const [message] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "fine")],
    });
    const id = message?.id ?? "";
    await getDatabase()
      .db.updateTable("ai_gateway_messages")
      .set(change)
      .where("id", "=", id)
      .execute();
    return { subject, id };
  };

  it("B3 a type or status changed outside the store is reported by a context read", async () => {
    for (const change of [{ type: "thought" }, { status: "done" }]) {
      const { subject, id } = await changedBehindTheStore(change);
      await expect(store().readContext(subject, id)).rejects.toMatchObject({
        code: "store_row_invalid",
        message: expect.stringContaining(Object.keys(change)[0] ?? ""),
      });
    }
  });

  it("B3 a role changed outside the store is reported when the message is read", async () => {
    const { subject, id } = await changedBehindTheStore({ role: "assistant" });
    await expect(store().getMessage(subject, id)).rejects.toMatchObject({
      code: "store_row_invalid",
      message: expect.stringContaining("role"),
    });
  });
});

it("B3 the chain read knows every type and status the gateway writes", () => {
  expect([...MESSAGE_TYPE_VALUES].sort()).toEqual(Object.keys(ROLE_OF_TYPE).sort());
  expect([...MESSAGE_STATUS_VALUES].sort()).toEqual(["in_progress", ...FINAL_STATUSES].sort());
});
