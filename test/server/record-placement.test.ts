/**
 * Issue 18, the write path of recorded calls: a call's bytes are committed before the client's
 * response ends, and its place in a chain (conversation, nodes, gateway messages, previous call,
 * usage) is written right after. The window between the two is tested as a crash would leave
 * it: the placing's transaction never commits (here it fails at its last statement and rolls
 * back), then a restarted recorder, the session's next call, or a restarted server places what
 * was left, and the chain is the one an uninterrupted recording gives. close() waits for every
 * queued placing. SQLite and PostgreSQL.
 */
import type { KyselyPlugin } from "kysely";
import { afterAll, expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import {
  RecordedCalls,
  type CallToRecord,
} from "../../packages/server/src/gateway/recording/calls.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { anthropicCallToRecord, callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { testServer, type TestServer } from "../support/server.js";

/** A call whose upstream answered "A". */
function call(subjectUid: string, messages: unknown[]): CallToRecord {
  return anthropicCallToRecord(subjectUid, messages, "A");
}

const first = [{ role: "user", content: "Q1" }];
const second = [...first, { role: "assistant", content: "A" }, { role: "user", content: "Q2" }];

/** The database as a process that ends before the placing commits: its last statement fails. */
function crashingBeforePlacement(database: StoreDatabase): StoreDatabase {
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (args.node.kind === "UpdateQueryNode") throw new Error("the process ended here");
      return args.node;
    },
    async transformResult(args) {
      return args.result;
    },
  };
  return { ...database, db: database.db.withPlugin(plugin) };
}

describeEachDialect("recorded calls: committed before the answer, placed after", (getDatabase) => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.app.close();
  });

  function rows(subject: string) {
    return recordedCallRows(getDatabase(), subject);
  }

  /** Keeps both calls of a session in a process that ends before placing either. */
  async function crashAfterKeeping(subject: string): Promise<string[]> {
    const crashed = new RecordedCalls(crashingBeforePlacement(getDatabase()));
    const ids: string[] = [];
    for (const messages of [first, second]) {
      const kept = await crashed.keep(call(subject, messages));
      await expect(kept.placed).rejects.toThrow("the process ended here");
      ids.push(kept.callId);
    }
    const left = await rows(subject);
    // Not placed: no conversation yet.
    expect(left.map((row) => [row.id, row.conversation_id])).toEqual([
      [ids[0], ""],
      [ids[1], ""],
    ]);
    // The bytes are there; nothing of the placing is.
    expect(JSON.parse(left[1]?.requestText ?? "").messages).toEqual(second);
    const messages = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("id")
      .where("subject_uid", "=", subject)
      .execute();
    expect(messages).toEqual([]);
    return ids;
  }

  /** The chain an uninterrupted recording gives: one conversation, Q1 A Q2 A, usage read. */
  async function expectCompleteChain(subject: string, ids: string[]): Promise<void> {
    const placed = await rows(subject);
    expect(placed[0]?.conversation_id).not.toBe("");
    expect(placed[1]?.conversation_id).toBe(placed[0]?.conversation_id);
    expect(placed.map((row) => [row.matched_count, row.previous_call_id])).toEqual([
      [0, null],
      [1, ids[0]],
    ]);
    expect(placed.map((row) => row.output_tokens)).toEqual([3, 3]);
    const store = new GatewayMessageStore(getDatabase());
    // The chain of the deepest message (a call's messages share their time).
    let chain: Awaited<ReturnType<typeof store.readFullChain>> = [];
    const messages = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("id")
      .where("subject_uid", "=", subject)
      .execute();
    for (const { id } of messages) {
      const candidate = await store.readFullChain(subject, id);
      if (candidate.length > chain.length) chain = candidate;
    }
    expect(messages).toHaveLength(4);
    expect(chain.map((message) => `${message.role}:${JSON.stringify(message.content)}`)).toEqual([
      'user:[{"type":"text","text":"Q1"}]',
      'assistant:[{"type":"text","text":"A"}]',
      'user:[{"type":"text","text":"Q2"}]',
      'assistant:[{"type":"text","text":"A"}]',
    ]);
    expect(new Set(chain.map((message) => message.conversationId))).toEqual(
      new Set([placed[0]?.conversation_id]),
    );
  }

  it("calls left unplaced by a crash are placed at the next start, oldest first, into the chain an uninterrupted recording gives", async () => {
    const subject = uniqueName("subject");
    const ids = await crashAfterKeeping(subject);
    const restarted = new RecordedCalls(getDatabase());
    await restarted.placeLeftovers();
    await restarted.close();
    await expectCompleteChain(subject, ids);
  });

  it("a session's next call places the calls left before it first, then continues their chain", async () => {
    const subject = uniqueName("subject");
    const [firstId] = await crashAfterKeeping(subject);
    // The session's next call, in a process that did not look for leftovers at start.
    const third = [...second, { role: "assistant", content: "A" }, { role: "user", content: "Q3" }];
    const result = await new RecordedCalls(getDatabase()).record(call(subject, third));
    const placed = await rows(subject);
    expect(placed.map((row) => row.conversation_id)).toEqual(Array(3).fill(result.conversationId));
    expect(placed[0]?.id).toBe(firstId);
    expect(result).toMatchObject({
      conversationId: placed[0]?.conversation_id,
      matchedCount: 3,
      previousCallId: placed[1]?.id,
    });
  });

  it("a restarted server places the calls a crash left, and the Conversations API shows them", async () => {
    const subject = uniqueName("subject");
    const ids = await crashAfterKeeping(subject);
    server = await testServer(getDatabase());
    await callsPlaced(getDatabase(), subject);
    await expectCompleteChain(subject, ids);
    const { authorization } = await server.apiKeyFor(subject);
    const [row] = await rows(subject);
    const response = await server.app.inject({
      method: "GET",
      url: `/v1/conversations/${row?.conversation_id}/items?order=asc`,
      headers: { authorization },
    });
    expect(response.statusCode).toBe(200);
    expect((response.json() as { data: unknown[] }).data).toHaveLength(4);
  });

  it("close() waits for every queued placing; calls sent back to back are placed in order", async () => {
    const subject = uniqueName("subject");
    const recorder = new RecordedCalls(getDatabase());
    const kept = [];
    for (const messages of [first, second]) kept.push(await recorder.keep(call(subject, messages)));
    // Kept, not necessarily placed yet.
    expect((await rows(subject)).map((row) => row.id)).toEqual(kept.map((one) => one.callId));
    await recorder.close();
    const placed = await rows(subject);
    expect(placed.map((row) => row.conversation_id === "")).toEqual([false, false]);
    expect(placed[1]?.previous_call_id).toBe(kept[0]?.callId);
  });
});
