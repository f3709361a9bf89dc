import { expect, it } from "vitest";
import { VerbatimError } from "verbatim-llm/core";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import { GatewayMessageStore, type AppendMessageInput } from "./message-store.js";

const say = (role: "user" | "assistant", text: string): AppendMessageInput => ({
  role,
  content: [{ type: "text", text }],
});

async function failure(promise: Promise<unknown>): Promise<VerbatimError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(VerbatimError);
  return error as VerbatimError;
}

describeEachDialect("gateway subjects and bad input", (getDatabase) => {
  const store = () => new GatewayMessageStore(getDatabase());

  async function rowCount(): Promise<number> {
    const row = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it("B4 another subject's anchor or conversation behaves exactly like a missing one", async () => {
    const owner = uniqueName("owner");
    const intruder = uniqueName("intruder");
    const [user] = await store().appendMessages(owner, {
      previousMessageId: null,
      messages: [say("user", "private")],
    });
    const id = user?.id ?? "";
    const conversationId = user?.conversationId ?? "";
    const missingId = "msg_doesnotexist0000000000000";
    const calls: ((messageId: string) => Promise<unknown>)[] = [
      (messageId) => store().readContext(intruder, messageId),
      (messageId) => store().getMessage(intruder, messageId),
      (messageId) =>
        store().appendMessages(intruder, {
          previousMessageId: messageId,
          messages: [say("user", "x")],
        }),
      (messageId) => store().finishMessage(intruder, messageId, { status: "failed" }),
      (messageId) => store().listContinuations(intruder, messageId),
    ];
    for (const call of calls) {
      const a = await failure(call(id));
      const b = await failure(call(missingId));
      expect(a.code).toBe("gateway_message_not_found");
      expect({ code: a.code, message: a.message.replace(id, "ID"), hint: a.hint }).toEqual({
        code: b.code,
        message: b.message.replace(missingId, "ID"),
        hint: b.hint,
      });
    }
    const missingConversation = "conv_doesnotexist000000000000";
    for (const call of [
      (conversation: string) => store().getConversation(intruder, conversation),
      (conversation: string) => store().listMessages(intruder, conversation),
      (conversation: string) =>
        store().appendMessages(intruder, {
          previousMessageId: null,
          conversationId: conversation,
          messages: [say("user", "x")],
        }),
    ]) {
      const a = await failure(call(conversationId));
      const b = await failure(call(missingConversation));
      expect(a.code).toBe("gateway_conversation_not_found");
      expect(a.message.replace(conversationId, "ID")).toBe(
        b.message.replace(missingConversation, "ID"),
      );
    }
    // The owner's rows are untouched, and the intruder wrote nothing anywhere.
    expect((await store().getMessage(owner, id)).status).toBe("completed");
    const intruderRows = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("id")
      .where("subject_uid", "=", intruder)
      .execute();
    expect(intruderRows).toEqual([]);
  });

  it("B4 an anchor named with the wrong conversation is not found, nothing written", async () => {
    const subject = uniqueName("subject");
    const [a] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "a")],
    });
    const [b] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "b")],
    });
    const error = await failure(
      store().appendMessages(subject, {
        previousMessageId: a?.id ?? "",
        conversationId: b?.conversationId ?? "",
        messages: [say("assistant", "x")],
      }),
    );
    expect(error.code).toBe("gateway_message_not_found");
    expect(await store().listContinuations(subject, a?.id ?? "")).toEqual([]);
  });

  it("B3 bad input gets a clear error naming the field, and nothing is written", async () => {
    const subject = uniqueName("subject");
    const [root] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "root")],
    });
    const anchor = root?.id ?? "";
    const before = await rowCount();
    const cases: [unknown, string, RegExp][] = [
      [{ previousMessageId: anchor, messages: [] }, "gateway_input_invalid", /at least one/],
      [
        { previousMessageId: anchor, messages: [{ role: "robot", content: [] }] },
        "gateway_input_invalid",
        /role/,
      ],
      [
        { previousMessageId: anchor, messages: [{ role: "user", content: "just text" }] },
        "gateway_input_invalid",
        /array/,
      ],
      [
        {
          previousMessageId: anchor,
          messages: [say("user", "ok"), { role: "user", content: [{ type: "text", text: 42 }] }],
        },
        "gateway_input_invalid",
        /string/,
      ],
      [
        {
          previousMessageId: anchor,
          messages: [{ role: "user", content: [{ type: "thinking", text: "x" }] }],
        },
        "gateway_input_invalid",
        /./,
      ],
      [
        { previousMessageId: anchor, messages: [{ ...say("user", "x"), extra: 1 }] },
        "gateway_input_invalid",
        /extra/,
      ],
      [
        { previousMessageId: anchor, messages: [{ ...say("user", "x"), type: "assistant" }] },
        "gateway_input_invalid",
        /role/,
      ],
      [
        { previousMessageId: anchor, messages: [{ ...say("user", "x"), type: "summary" }] },
        "gateway_input_invalid",
        /./,
      ],
      [{ previousMessageId: 7, messages: [say("user", "x")] }, "gateway_input_invalid", /./],
      [
        { previousMessageId: anchor, messages: [say("user", "bad \ud800 surrogate")] },
        "gateway_input_invalid",
        /surrogate/,
      ],
      [
        {
          previousMessageId: anchor,
          messages: [{ ...say("user", "x"), status: "in_progress" }, say("user", "y")],
        },
        "gateway_input_invalid",
        /in_progress/,
      ],
      [
        { previousMessageId: "msg_unknown", messages: [say("user", "x")] },
        "gateway_message_not_found",
        /msg_unknown/,
      ],
      [
        { previousMessageId: anchor, messages: [say("user", "x")], idempotencyKey: "" },
        "gateway_input_invalid",
        /idempotency/,
      ],
    ];
    for (const [input, code, pattern] of cases) {
      const error = await failure(store().appendMessages(subject, input as never));
      expect(error.code, JSON.stringify(input).slice(0, 120)).toBe(code);
      expect(error.describe()).toMatch(pattern);
    }
    const where = await failure(
      store().appendMessages(subject, {
        previousMessageId: anchor,
        messages: [say("user", "ok"), { role: "user", content: [{ type: "text", text: 42 }] }],
      } as never),
    );
    expect(where.where).toBe("messages[1].content[0].text");
    await expect(
      failure(
        store().appendMessages("", { previousMessageId: null, messages: [say("user", "x")] }),
      ),
    ).resolves.toMatchObject({ code: "gateway_input_invalid", where: "subjectUid" });
    expect(await rowCount()).toBe(before);
  });

  it("B3 oversized content and too many messages are refused, nothing written", async () => {
    const small = new GatewayMessageStore(getDatabase(), {
      limits: { maxContentBytes: 1000, maxMessagesPerWrite: 3 },
    });
    const subject = uniqueName("subject");
    const before = await rowCount();
    const big = await failure(
      small.appendMessages(subject, {
        previousMessageId: null,
        messages: [say("user", "ok"), say("user", "x".repeat(1000))],
      }),
    );
    expect(big.code).toBe("gateway_content_too_large");
    expect(big.where).toBe("messages[1].content");
    const many = await failure(
      small.appendMessages(subject, {
        previousMessageId: null,
        messages: Array.from({ length: 4 }, () => say("user", "x")),
      }),
    );
    expect(many.code).toBe("gateway_content_too_large");
    // the default limit is 4 MiB per message
    const huge = await failure(
      store().appendMessages(subject, {
        previousMessageId: null,
        messages: [say("user", "y".repeat(4 * 1024 * 1024 + 1))],
      }),
    );
    expect(huge.code).toBe("gateway_content_too_large");
    expect(await rowCount()).toBe(before);
  });

  it("B3 idempotency: repeating a write with its key returns the first result and writes nothing", async () => {
    const subject = uniqueName("subject");
    const input = {
      previousMessageId: null,
      messages: [say("user", "once"), say("assistant", "only once")],
      idempotencyKey: "turn-1",
    };
    const first = await store().appendMessages(subject, input);
    const before = await rowCount();
    const again = await store().appendMessages(subject, input);
    expect(again).toEqual(first);
    expect(await rowCount()).toBe(before);
    // the same key from another subject is another key
    const other = await store().appendMessages(uniqueName("other"), input);
    expect(other[0]?.id).not.toBe(first[0]?.id);
    // the same key for a different request is refused
    const reused = await failure(
      store().appendMessages(subject, { ...input, messages: [say("user", "different")] }),
    );
    expect(reused.code).toBe("gateway_idempotency_key_reused");
  });

  it("B3 idempotency holds under concurrent repeats", async () => {
    const subject = uniqueName("subject");
    const [root] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "root")],
    });
    const input = {
      previousMessageId: root?.id ?? "",
      messages: [say("assistant", "answer")],
      idempotencyKey: "retry-storm",
    };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => store().appendMessages(subject, input)),
    );
    const ids = new Set(results.map((result) => result[0]?.id));
    expect(ids.size).toBe(1);
    expect(await store().listContinuations(subject, root?.id ?? "")).toHaveLength(1);
  });
});
