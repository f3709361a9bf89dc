/**
 * Issue 34 items 1 and 2: the console's search of one subject (`subject_uid`). Two subjects'
 * messages and job items interleaved in time: a search of one subject finds that subject's
 * matches only, the same pages whether its first try among the subject's newest rows decides
 * them (few or many rows read) or the text index does, and the two subjects' searches together
 * find what the search of every subject finds. On both databases.
 */
import { expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import {
  searchConsole,
  type SearchKey,
} from "../../packages/server/src/store/repositories/console-search.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";

describeEachDialect("issue 34: search of one subject", (getDatabase) => {
  it("issue 34 item 1: a subject's search gives the same pages through its newest rows as through the index, and only its matches", async () => {
    const database = getDatabase();
    const store = new GatewayMessageStore(database);
    const jobs = new BackgroundAgentJobs(database);
    const subjects = [uniqueName("searched_a"), uniqueName("searched_b")] as const;
    const common = uniqueName("common");
    const rare = uniqueName("rare");
    const previous = new Map<string, string | null>();
    // 30 messages, the subjects taking turns (a, b, b, a, b, b, …: b has twice a's rows).
    for (let index = 0; index < 30; index++) {
      const subject = subjects[index % 3 === 0 ? 0 : 1];
      const text = `${common} turn ${index}${index % 4 === 0 ? ` ${rare} here` : ""}`;
      const [written] = await store.appendMessages(subject, {
        previousMessageId: previous.get(subject) ?? null,
        messages: [{ role: "user", content: [{ type: "text", text }] }],
      });
      previous.set(subject, written?.id ?? null);
      // A job item of each subject now and then, between the messages.
      if (index % 10 === 5) {
        for (const owner of subjects) {
          const [first] = await store.appendMessages(owner, {
            previousMessageId: null,
            messages: [{ role: "user", content: [{ type: "text", text: "job" }] }],
          });
          const job = await jobs.createJob(owner, {
            conversationId: first?.conversationId ?? "",
            retryBudget: 0,
          });
          await jobs.startAttempt(owner, job.id);
          await jobs.startTurn(owner, job.id, [
            { item_key: "client:1", item: { type: "user_message", text: `${common} item` } },
            { item_key: "client:2", item: { type: "user_message", text: `${rare} item` } },
          ]);
        }
      }
    }
    const { db, capabilities } = database;
    const walk = async (query: string, probeRows: number, subjectUid?: string) => {
      const pages: string[][] = [];
      let after: SearchKey | undefined;
      for (;;) {
        const rows = await searchConsole(db, capabilities, {
          query,
          limit: 4,
          after,
          probeRows,
          subjectUid,
        });
        pages.push(rows.map((row) => `${row.subject_uid} ${row.kind} ${row.id} ${row.body}`));
        const last = rows[rows.length - 1];
        if (rows.length < 4 || last === undefined) return pages;
        after = [last.created_at, last.parent_id, last.id, last.kind];
      }
    };
    for (const query of [common, rare, `${rare} here`, "no such text anywhere"]) {
      const everyone = (await walk(query, 0)).flat();
      const found: string[] = [];
      for (const subject of subjects) {
        const indexed = await walk(query, 0, subject);
        // 3 rows of each table: a common word decides some pages among them, a rare one cannot.
        for (const probeRows of [3, 8, 100_000]) {
          expect(await walk(query, probeRows, subject), `${query} ${probeRows}`).toEqual(indexed);
        }
        for (const row of indexed.flat()) expect(row.startsWith(`${subject} `), row).toBe(true);
        found.push(...indexed.flat());
      }
      expect(found.sort(), query).toEqual([...everyone].sort());
    }
    // a: 10 messages and 3 items; b: 20 messages and 3 items.
    expect((await walk(common, 0, subjects[0])).flat()).toHaveLength(13);
    expect((await walk(common, 0, subjects[1])).flat()).toHaveLength(23);
    expect((await walk(common, 100_000)).flat()).toHaveLength(36);
  });
});
