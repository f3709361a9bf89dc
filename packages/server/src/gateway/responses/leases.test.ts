import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import { GatewayMessageStore } from "../conversations/message-store.js";
import { ResponseLeases, SERVER_INTERRUPTED } from "./leases.js";

describeEachDialect("response leases", (getDatabase) => {
  const startLeased = async (
    store: GatewayMessageStore,
    subject: string,
    leaseMilliseconds: number,
    leaseHolder?: string,
  ) => {
    const [started] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [
        {
          role: "assistant",
          content: [{ type: "text", text: "so far" }],
          status: "in_progress",
          leaseMilliseconds,
          ...(leaseHolder === undefined ? {} : { leaseHolder }),
        },
      ],
    });
    if (started === undefined) throw new Error("nothing appended");
    return started;
  };
  const statusOf = async (id: string) =>
    await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select(["status", "metadata", "content"])
      .where("id", "=", id)
      .executeTakeFirst();

  it("a lease is refused on a final message and when not a positive whole number of ms", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("lease");
    for (const [status, leaseMilliseconds] of [
      ["completed", 1000],
      ["in_progress", 0],
      ["in_progress", 1.5],
      ["in_progress", "1000"],
    ] as const) {
      await expect(
        store.appendMessages(subject, {
          previousMessageId: null,
          messages: [
            {
              role: "assistant",
              content: [],
              status,
              leaseMilliseconds: leaseMilliseconds as number,
            },
          ],
        }),
      ).rejects.toMatchObject({
        code: "gateway_input_invalid",
        where: "messages[0].leaseMilliseconds",
      });
    }
  });

  it("a server never ends a response it holds whose renewal came late; another server does", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("lease");
    const leases = new ResponseLeases(getDatabase(), { leaseMilliseconds: 60_000 });
    const held = await startLeased(store, subject, 20, leases.holder);
    const lost: string[] = [];
    leases.hold(subject, held.id, () => lost.push(held.id));
    // Its 20 ms lease runs out before any renewal (as when a renewal's statement is slow).
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await leases.endAbandoned()).not.toContain(held.id);
    expect((await statusOf(held.id))?.status).toBe("in_progress");
    // Another server cannot tell it from a dead server's: it ends it, and the holder hears.
    expect(await new ResponseLeases(getDatabase()).endAbandoned()).toContain(held.id);
    expect((await statusOf(held.id))?.status).toBe("incomplete");
    await leases.renew();
    expect(lost).toEqual([held.id]);
  });

  it("renewing keeps a held response alive; one ended elsewhere is reported lost", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("lease");
    const leases = new ResponseLeases(getDatabase(), { leaseMilliseconds: 60_000 });
    const kept = await startLeased(store, subject, 50, leases.holder);
    const ended = await startLeased(store, subject, 50, leases.holder);
    const lost: string[] = [];
    leases.hold(subject, kept.id, () => lost.push(kept.id));
    leases.hold(subject, ended.id, () => lost.push(ended.id));
    await store.finishMessage(subject, ended.id, { status: "cancelled" });
    await leases.renew();
    expect(lost).toEqual([ended.id]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    // The 50 ms lease was renewed for a minute: nothing is abandoned.
    expect(await new ResponseLeases(getDatabase()).endAbandoned()).not.toContain(kept.id);
    expect((await statusOf(kept.id))?.status).toBe("in_progress");
    leases.release(kept.id);
    await store.finishMessage(subject, kept.id, { status: "completed" });
  });

  it("abandoned responses end incomplete with their content, more than a batch at once; an unreadable one is reported and skipped", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("lease");
    const abandoned = [];
    for (let index = 0; index < 105; index++) abandoned.push(await startLeased(store, subject, 1));
    const unreadable = await startLeased(store, subject, 1);
    await sql`update ai_gateway_messages set metadata = ${"{}"} where id = ${unreadable.id}`.execute(
      getDatabase().db,
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    const leases = new ResponseLeases(getDatabase());
    const errors: unknown[] = [];
    await leases.start((error) => errors.push(error));
    await leases.stop();
    for (const message of abandoned) {
      const row = await statusOf(message.id);
      expect(row?.status).toBe("incomplete");
      expect(JSON.parse(row?.metadata ?? "{}").gateway.stopReason).toBe(SERVER_INTERRUPTED);
      expect(JSON.parse(row?.content ?? "[]")).toEqual([{ type: "text", text: "so far" }]);
    }
    expect((await statusOf(unreadable.id))?.status).toBe("in_progress");
    expect(errors.length).toBeGreaterThan(0);
    // Leave no unreadable row for the other tests of this database.
    await sql`update ai_gateway_messages set status = 'failed', metadata = ${'{"caller":{},"gateway":{}}'} where id = ${unreadable.id}`.execute(
      getDatabase().db,
    );
  });

  it("renews every response of its holder in one statement, however many; those of other holders are not its own", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("lease");
    const leases = new ResponseLeases(getDatabase(), { leaseMilliseconds: 60_000 });
    const ids: string[] = [];
    for (let index = 0; index < 1005; index++) ids.push(`msg_missing_${index}`);
    const one = await startLeased(store, subject, 60_000, leases.holder);
    ids.push(one.id);
    const lost: string[] = [];
    for (const id of ids) leases.hold(subject, id, () => lost.push(id));
    await leases.renew();
    expect(lost).toHaveLength(1005);
    expect(lost).not.toContain(one.id);
    await store.finishMessage(subject, one.id, { status: "completed" });
  });

  it("issue 34 item 3: a server renews only its own leases; a released response still in_progress runs out", async () => {
    const ours = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("lease");
    const leases = new ResponseLeases(getDatabase(), { leaseMilliseconds: 60_000 });
    const theirs = new ResponseLeases(getDatabase(), { leaseMilliseconds: 60_000 });
    const held = await startLeased(ours, subject, 60_000, leases.holder);
    const stuck = await startLeased(ours, subject, 60_000, leases.holder);
    // Another server's: held there, never renewed here.
    const other = await startLeased(ours, subject, 1, theirs.holder);
    const lost: string[] = [];
    leases.hold(subject, held.id, () => lost.push(held.id));
    leases.hold(subject, stuck.id, () => lost.push(stuck.id));
    // Its answer ended but its end could not be written: the row stays in_progress.
    leases.release(stuck.id);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await leases.renew();
    expect(lost).toEqual([]);
    const ended = await new ResponseLeases(getDatabase()).endAbandoned();
    expect(ended).toContain(other.id);
    expect(ended).toContain(stuck.id);
    expect(ended).not.toContain(held.id);
    expect((await statusOf(held.id))?.status).toBe("in_progress");
    leases.release(held.id);
    await ours.finishMessage(subject, held.id, { status: "completed" });
    expect(theirs.holder).not.toBe(leases.holder);
  });

  it("issue 34 item 3: servers reconciling at once end each abandoned response once", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("lease");
    const abandoned = new Set<string>();
    for (let index = 0; index < 250; index++) {
      abandoned.add((await startLeased(store, subject, 1)).id);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    const results = await Promise.all(
      [1, 2, 3].map(() => new ResponseLeases(getDatabase()).endAbandoned()),
    );
    const mine = results.flat().filter((id) => abandoned.has(id));
    expect(mine.length).toBe(abandoned.size);
    expect(new Set(mine).size).toBe(abandoned.size);
  });
});
