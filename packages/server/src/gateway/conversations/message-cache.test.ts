import { sql, type KyselyPlugin, type RootOperationNode } from "kysely";
import { describe, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import { startAfterUser } from "../../../../../test/support/gateway-chains.js";
import { MessageCache } from "./message-cache.js";
import { GatewayMessageStore, type AppendMessageInput } from "./message-store.js";
import type { GatewayMessage } from "./message-types.js";

const say = (role: "user" | "assistant", text: string): AppendMessageInput => ({
  role,
  content: [{ type: "text", text }],
});

describeEachDialect("gateway message cache", (getDatabase) => {
  const uncached = () => new GatewayMessageStore(getDatabase(), { cacheBytes: 0 });

  it("B4 a context read after appends comes from memory, as the database would give it", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const first = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "u1"), say("assistant", "a1")],
    });
    const tip = first[1]?.id ?? "";
    const fromMemory = await store.readContext(subject, tip);
    expect(fromMemory).toEqual(await uncached().readContext(subject, tip));
    // Proof that no row was read: a row changed behind the store's back since is not seen
    // by the cached store, while a store without cache reports it.
    await getDatabase()
      .db.updateTable("ai_gateway_messages")
      .set({ content: '[{"type":"thinking"}]' })
      .where("id", "=", first[0]?.id ?? "")
      .execute();
    expect((await store.readContext(subject, tip)).messages).toEqual(fromMemory.messages);
    await expect(uncached().readContext(subject, tip)).rejects.toMatchObject({
      code: "store_row_invalid",
    });
  });

  it("B4 continuing or reading a cached message reads no row of it; the chain still forks", async () => {
    const subject = uniqueName("subject");
    const reads: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery(args) {
        const node = args.node as RootOperationNode;
        // Reads: selects, and raw SQL that neither controls a transaction nor writes (the
        // chain walk is raw SQL; so is PostgreSQL's one-statement append, a write).
        if (node.kind === "SelectQueryNode") reads.push(node.kind);
        const text = node.kind === "RawNode" ? node.sqlFragments.join("?") : "";
        if (text !== "" && !/^\s*(begin|commit|rollback)|\binsert into\b/i.test(text)) {
          reads.push(text);
        }
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const database = getDatabase();
    const store = new GatewayMessageStore({ ...database, db: database.db.withPlugin(recorder) });
    const [, answer] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "u1"), say("assistant", "a1")],
    });
    const anchor = answer?.id ?? "";
    reads.length = 0;
    const context = await store.readContext(subject, anchor);
    const next = await store.appendMessages(subject, {
      previousMessageId: anchor,
      messages: [say("user", "u2")],
    });
    const sibling = await store.appendMessages(subject, {
      previousMessageId: anchor,
      messages: [say("user", "u2 other")],
    });
    expect(reads).toEqual([]);
    // The same answers a store without cache gives from the rows.
    expect(context).toEqual(await uncached().readContext(subject, anchor));
    for (const branch of [next, sibling]) {
      const id = branch[0]?.id ?? "";
      const fromRows = await uncached().readContext(subject, id);
      expect(fromRows.messages.map((message) => message.content)).toEqual(
        [...context.messages, ...branch].map((message) => message.content),
      );
      expect(await store.readContext(subject, id)).toEqual(fromRows);
    }
    expect(await uncached().listContinuations(subject, anchor)).toEqual([
      next[0]?.id,
      sibling[0]?.id,
    ]);
  });

  it("B4 another subject's cached message is still a missing anchor: nothing read or written", async () => {
    const owner = uniqueName("subject");
    const other = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [message] = await store.appendMessages(owner, {
      previousMessageId: null,
      messages: [say("user", "mine")],
    });
    const id = message?.id ?? "";
    const count = async () =>
      Number(
        (
          await sql<{ n: number }>`select count(*) as n from ai_gateway_messages`.execute(
            getDatabase().db,
          )
        ).rows[0]?.n,
      );
    const before = await count();
    await expect(store.readContext(other, id)).rejects.toMatchObject({
      code: "gateway_message_not_found",
    });
    await expect(
      store.appendMessages(other, { previousMessageId: id, messages: [say("user", "theirs")] }),
    ).rejects.toMatchObject({ code: "gateway_message_not_found" });
    expect(await count()).toBe(before);
  });

  it("B4 a chain partly in memory is completed from the database, in order, forks included", async () => {
    const subject = uniqueName("subject");
    const writer = uncached();
    const base = await writer.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        say("user", "u1"),
        say("assistant", "a1"),
        say("user", "u2"),
        say("assistant", "a2"),
      ],
    });
    const reader = new GatewayMessageStore(getDatabase());
    // The reader holds u1, a1 only (read), then writes a fork after a2 it never read.
    await reader.readContext(subject, base[1]?.id ?? "");
    const fork = await reader.appendMessages(subject, {
      previousMessageId: base[1]?.id ?? "",
      messages: [say("user", "u2 other")],
    });
    const tail = await reader.appendMessages(subject, {
      previousMessageId: base[3]?.id ?? "",
      messages: [say("user", "u3"), say("assistant", "a3")],
    });
    for (const anchor of [...base, ...fork, ...tail]) {
      const expected = await uncached().readContext(subject, anchor.id);
      expect(await reader.readContext(subject, anchor.id)).toEqual(expected);
      expect(await reader.readContext(subject, anchor.id)).toEqual(expected);
    }
    expect(reader.cacheStats().messages).toBe(7);
  });

  it("B3 an in_progress message is never kept: its final state, written elsewhere, is read", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const { started } = await startAfterUser(store, subject, "hello");
    expect((await store.readContext(subject, started.id)).anchor.status).toBe("in_progress");
    // Another process (another store on the same database) finishes it.
    await uncached().finishMessage(subject, started.id, {
      status: "completed",
      content: [{ type: "text", text: "done" }],
    });
    const context = await store.readContext(subject, started.id);
    expect(context.anchor.status).toBe("completed");
    expect(context.anchor.content).toEqual([{ type: "text", text: "done" }]);
  });

  it("B6 a summary's context starts at the summary when read from memory", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const chain = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "u1"), say("assistant", "a1")],
    });
    const { compressContext } = await import("./compression.js");
    const summary = await compressContext(store, subject, {
      anchorId: chain[1]?.id ?? "",
      summary: "they said hello",
    });
    const after = await store.appendMessages(subject, {
      previousMessageId: summary.id,
      messages: [say("user", "u2")],
    });
    const context = await store.readContext(subject, after[0]?.id ?? "");
    expect(context.messages.map((message) => message.type)).toEqual(["summary", "user"]);
    expect(context).toEqual(await uncached().readContext(subject, after[0]?.id ?? ""));
  });

  it("B4 another subject's anchor stays missing, cached or not", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [message] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "mine")],
    });
    await expect(store.readContext(uniqueName("other"), message?.id ?? "")).rejects.toMatchObject({
      code: "gateway_message_not_found",
    });
  });

  it("issue 20 messages read by id come from memory when cached, else from rows (cached then); another subject's stay missing", async () => {
    const subject = uniqueName("subject");
    const writer = new GatewayMessageStore(getDatabase());
    const written = await writer.appendMessages(subject, {
      previousMessageId: null,
      messages: [say("user", "u1"), say("assistant", "a1"), say("user", "u2")],
    });
    const ids = written.map((message) => message.id);
    // Cached at write: the very objects, in the order asked.
    const reversed = [...ids].reverse();
    const cached = await writer.readMessages(subject, reversed);
    expect(cached.map((message) => message.id)).toEqual(reversed);
    expect(cached[0]).toBe(
      await writer.readMessages(subject, [reversed[0] ?? ""]).then((m) => m[0]),
    );
    // Another store (another process) reads the rows, as listMessages gives them, and keeps them.
    const reader = new GatewayMessageStore(getDatabase());
    const first = await reader.readMessages(subject, ids);
    expect(first).toEqual(await uncached().listMessages(subject, written[0]?.conversationId ?? ""));
    expect(reader.cacheStats().messages).toBe(3);
    expect((await reader.readMessages(subject, ids))[2]).toBe(first[2]);
    // The list ends before an id that is missing or another subject's.
    expect(await reader.readMessages(uniqueName("other"), ids)).toEqual([]);
    const [one, , three] = ids;
    expect(
      (await reader.readMessages(subject, [one ?? "", "msg_missing", three ?? ""])).map(
        (message) => message.id,
      ),
    ).toEqual([one]);
  });
});

describe("MessageCache", () => {
  const message = (id: string, text: string): GatewayMessage => ({
    id,
    subjectUid: "s",
    conversationId: "c",
    previousMessageId: null,
    type: "user",
    role: "user",
    status: "completed",
    content: [{ type: "text", text }],
    metadata: { caller: {}, gateway: {} },
    depth: 0,
    createdAt: "2026-11-30T00:00:00.000Z",
    updatedAt: "2026-11-30T00:00:00.000Z",
  });

  it("B4 keeps the most recently used messages within its byte budget", () => {
    const cache = new MessageCache(3 * (1000 + 256));
    for (const id of ["a", "b", "c"]) cache.add(message(id, id), "branch", 0, 1000);
    expect(cache.get("a")?.id).toBe("a");
    cache.add(message("d", "d"), "branch", 0, 1000);
    expect(cache.get("b")).toBeUndefined();
    expect(["a", "c", "d"].map((id) => cache.get(id)?.id)).toEqual(["a", "c", "d"]);
    expect(cache.bytes).toBeLessThanOrEqual(cache.maxBytes);
    cache.add(message("huge", "x"), "branch", 0, 10_000);
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.size).toBe(3);
  });

  it("B3 keeps only final messages, frozen, so no reader can change another's", () => {
    const cache = new MessageCache(1 << 20);
    cache.add({ ...message("p", "partial"), status: "in_progress" }, "branch", 0, 10);
    expect(cache.get("p")).toBeUndefined();
    cache.add(message("f", "final"), "branch", 0, 10);
    const kept = cache.get("f");
    expect(Object.isFrozen(kept)).toBe(true);
    expect(Object.isFrozen(kept?.content[0])).toBe(true);
    expect(() => {
      (kept?.content as unknown as { text: string }[])[0]!.text = "changed";
    }).toThrow(TypeError);
  });

  it("B4 a budget of 0 keeps nothing", () => {
    const cache = new MessageCache(0);
    cache.add(message("a", "a"), "branch", 0, 1);
    expect(cache.size).toBe(0);
  });
});
