/**
 * B14 / issue 34 item 1: the operator console's reads name the subject in every statement on a
 * subject-owned table (store/subject-keys.ts). A conversation page, a message slice, the
 * model-visible input, a long poll and an image, given by id alone, find the owner first (one
 * statement marked across subjects) and name it after; the lists and search name the subject
 * when the operator filters one (each statement then reads one partition on PostgreSQL: issue
 * 34 item 2, "console pages and search") and are marked across subjects when not; the search
 * index's catch-up is across subjects by nature, marked. On both databases, through the real
 * HTTP app (the pages built on the event loop, on the audited connection) and the store's
 * search.
 *
 * The data is written through a second connection, not audited: the writes are other areas'.
 */
import { describe, expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { GatewayImageStore } from "../../packages/server/src/gateway/conversations/images.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import {
  searchConsole,
  type SearchKey,
} from "../../packages/server/src/store/repositories/console-search.js";
import {
  catchUpSearchIndex,
  checkSearchIndex,
  deferSearchIndex,
  SERVER_CATCH_UP_PACE,
} from "../../packages/server/src/store/search-deferral.js";
import { ACROSS_SUBJECTS } from "../../packages/server/src/store/subject-keys.js";
import { postgresUrl, testDialects, uniqueName } from "../support/databases.js";
import { testServer } from "../support/server.js";
import {
  auditedDatabase,
  expectEveryStatementNamesTheSubject,
  expectStatementRan,
  type AuditedDatabase,
} from "../support/statement-audit.js";
import { TINY_PNG, TINY_PNG_SHA256 } from "../console/seed-images.js";

const WORD = "zebracorn";
const EMOJI = "🌞";

/**
 * Fails unless some audited statement holds every fragment and none of those is marked across
 * subjects (so that on PostgreSQL its plan is checked to read one partition).
 */
function expectNamedNotMarked(audit: AuditedDatabase, ...fragments: string[]): void {
  const found = [...audit.statements].filter((text) =>
    fragments.every((fragment) => text.includes(fragment)),
  );
  expect(found.length, `a statement containing ${JSON.stringify(fragments)} ran`).toBeGreaterThan(
    0,
  );
  expect(found.filter((text) => text.includes(ACROSS_SUBJECTS))).toEqual([]);
}

/** The one audited statement holding every fragment (fails listing none when there is none). */
function statementWith(audit: AuditedDatabase, ...fragments: string[]): string {
  const found = [...audit.statements].filter((text) =>
    fragments.every((fragment) => text.includes(fragment)),
  );
  expect(found.length, `a statement containing ${JSON.stringify(fragments)} ran`).toBeGreaterThan(
    0,
  );
  return found[0] ?? "";
}

for (const dialect of testDialects) {
  describe.skipIf(dialect === "postgres" && postgresUrl === undefined)(
    `console reads name the subject [${dialect}]`,
    () => {
      it("B14 / issue 34 item 1: lists, pages, slices, model input, search, an image and a long poll", async () => {
        const audit = await auditedDatabase(dialect);
        const seed = await openDatabase(audit.location);
        const a = uniqueName("subject_a");
        const b = uniqueName("subject_b");
        try {
          // Subject a: a conversation with an image, request settings and a fork, another
          // conversation, and a job; subject b: one conversation.
          const store = new GatewayMessageStore(seed);
          await new GatewayImageStore(seed).save(a, [
            { sha256: TINY_PNG_SHA256, mimeType: "image/png", bytes: new Uint8Array(TINY_PNG) },
          ]);
          const [question, answer, followUp] = await store.appendMessages(a, {
            previousMessageId: null,
            messages: [
              {
                role: "user",
                content: [
                  { type: "text", text: `Is it ${WORD} weather? ${EMOJI}` },
                  { type: "image", sha256: TINY_PNG_SHA256, mimeType: "image/png" },
                ],
              },
              {
                role: "assistant",
                content: [{ type: "text", text: `Sunny ${WORD} weather.` }],
                gateway: { model: "claude-sonnet-4-5", provider: "anthropic" },
                request: { instructions: "Be brief.", tools: [], maxOutputTokens: 64 },
              },
              { role: "user", content: [{ type: "text", text: "And tomorrow?" }] },
            ],
          });
          if (question === undefined || answer === undefined || followUp === undefined) {
            throw new Error("the seed wrote fewer messages than it asked for");
          }
          await store.appendMessages(a, {
            previousMessageId: question.id,
            messages: [{ role: "assistant", content: [{ type: "text", text: "A fork." }] }],
          });
          await store.appendMessages(a, {
            previousMessageId: null,
            messages: [{ role: "user", content: [{ type: "text", text: "Second conversation" }] }],
          });
          const [other] = await store.appendMessages(b, {
            previousMessageId: null,
            messages: [{ role: "user", content: [{ type: "text", text: `b's ${WORD} too` }] }],
          });
          if (other === undefined) throw new Error("the seed wrote no message for b");
          const jobs = new BackgroundAgentJobs(seed);
          const job = await jobs.createJob(a, {
            conversationId: question.conversationId,
            retryBudget: 0,
          });
          await jobs.startAttempt(a, job.id);
          await jobs.startTurn(a, job.id, [
            { item_key: "client:1", item: { type: "user_message", text: `a ${WORD} job` } },
          ]);

          const server = await testServer(audit.database, { consoleWorker: false });
          const get = async (url: string, status = 200) => {
            const reply = await server.app.inject({ method: "GET", url, headers: server.operator });
            expect(reply.statusCode, url).toBe(status);
            return reply;
          };
          try {
            // Lists: every subject (keyset pages), one subject, a prefix, a model.
            const lists = [
              "/ai-gateway/conversations?limit=1",
              `/ai-gateway/conversations?limit=1&subject_uid=${a}`,
              `/ai-gateway/conversations?subject_uid=${a}&model=claude-sonnet-4-5`,
              "/ai-gateway/conversations?model=claude-sonnet-4-5",
              "/ai-gateway/conversations?subject_prefix=subject_",
            ];
            for (const url of lists) {
              const first = (await get(url)).json() as { next_cursor: string | null };
              if (first.next_cursor !== null) await get(`${url}&cursor=${first.next_cursor}`);
            }
            expect(
              (await get(`/ai-gateway/conversations?subject_uid=${a}`)).json().data,
            ).toHaveLength(2);

            // A conversation's pages: slices by cursor, the three views, an anchor's context.
            const messages = `/ai-gateway/conversations/${question.conversationId}/messages`;
            const first = (await get(`${messages}?limit=2`)).json() as {
              messages: unknown[];
              next_cursor: string;
            };
            expect(first.messages).toHaveLength(2);
            expect(
              (await get(`${messages}?limit=2&cursor=${first.next_cursor}`)).json().messages,
            ).toHaveLength(2);
            await get(`${messages}?view=chatml`);
            // The newest message (the fork's answer) and an anchor whose context holds the
            // answer with request settings.
            await get(`${messages}?view=model-visible`);
            const visible = (
              await get(`${messages}?view=model-visible&anchor=${followUp.id}`)
            ).json();
            expect(visible.model_input).toMatchObject({ message_id: answer.id });
            // Another subject's message is no anchor of this conversation; an unknown id is none.
            await get(`${messages}?anchor=${other.id}`, 404);
            await get("/ai-gateway/conversations/no-such-conversation/messages", 404);

            // Long polls that return: at once (more than asked for already), and after wait_ms.
            await get(`${messages}?wait_for_more_than=0&wait_ms=5000`);
            await get(`${messages}?wait_for_more_than=100&wait_ms=300`);

            // An image; another subject's message in this conversation is not found.
            const image = await get(`${messages}/${question.id}/blocks/1/image`);
            expect(image.headers["x-image-sha256"]).toBe(TINY_PNG_SHA256);
            await get(`${messages}/${other.id}/blocks/0/image`, 404);

            // Search through the route (the newest rows decide small stores): a word, a phrase
            // and one emoji, page by page.
            // Every page of a search through the route, one match a page: the matches' subjects.
            const searchSubjects = async (q: string, filter = "") => {
              const subjects: string[] = [];
              let cursor: string | null = "";
              while (cursor !== null) {
                const page = (
                  await get(
                    `/ai-gateway/search?limit=1&q=${encodeURIComponent(q)}${filter}${cursor === "" ? "" : `&cursor=${cursor}`}`,
                  )
                ).json() as { data: { subject_uid: string }[]; next_cursor: string | null };
                subjects.push(...page.data.map((hit) => hit.subject_uid));
                cursor = page.next_cursor;
              }
              return subjects;
            };
            for (const q of [WORD, `${WORD} weather`, EMOJI]) {
              expect((await searchSubjects(q)).length, q).toBeGreaterThan(0);
            }
            // Unfiltered, the word is found in both subjects' rows.
            expect(new Set(await searchSubjects(WORD))).toEqual(new Set([a, b]));
            // Filtered by subject: only that subject's matches (a: two messages and the job's
            // item; b: its one message), page by page.
            expect(await searchSubjects(WORD, `&subject_uid=${a}`)).toEqual([a, a, a]);
            expect(await searchSubjects(WORD, `&subject_uid=${b}`)).toEqual([b]);
            expect(await searchSubjects(`${WORD} weather`, `&subject_uid=${a}`)).toEqual([a, a]);
            expect(await searchSubjects(`${WORD} weather`, `&subject_uid=${b}`)).toEqual([]);
            expect(await searchSubjects(EMOJI, `&subject_uid=${a}`)).toEqual([a]);
            expect(await searchSubjects(EMOJI, `&subject_uid=${b}`)).toEqual([]);
            // And through the text index (no first try among the newest rows), page by page.
            for (const query of [WORD, `${WORD} weather`, EMOJI]) {
              let after: SearchKey | undefined;
              do {
                const rows = await searchConsole(audit.database.db, audit.database.capabilities, {
                  query,
                  limit: 1,
                  after,
                  probeRows: 0,
                });
                const last = rows[0];
                after =
                  last === undefined
                    ? undefined
                    : [last.created_at, last.parent_id, last.id, last.kind];
              } while (after !== undefined);
            }
            // The same through the text index, filtered by subject, page by page.
            const indexed = async (query: string, subjectUid: string) => {
              const subjects: string[] = [];
              let after: SearchKey | undefined;
              do {
                const rows = await searchConsole(audit.database.db, audit.database.capabilities, {
                  query,
                  limit: 1,
                  after,
                  probeRows: 0,
                  subjectUid,
                });
                subjects.push(...rows.map((row) => row.subject_uid));
                const last = rows[0];
                after =
                  last === undefined
                    ? undefined
                    : [last.created_at, last.parent_id, last.id, last.kind];
              } while (after !== undefined);
              return subjects;
            };
            expect(await indexed(WORD, a)).toEqual([a, a, a]);
            expect(await indexed(WORD, b)).toEqual([b]);
            expect(await indexed(`${WORD} weather`, a)).toEqual([a, a]);
            expect(await indexed(`${WORD} weather`, b)).toEqual([]);
            expect(await indexed(EMOJI, a)).toEqual([a]);
            expect(await indexed(EMOJI, b)).toEqual([]);

            // SQLite: an import's rows left out of the index, found meanwhile, then caught up at
            // once and at the server's pace, and the index checked.
            if (dialect === "sqlite") {
              for (const index of [true, false]) {
                const deferral = await deferSearchIndex(audit.database);
                await store.appendMessages(b, {
                  previousMessageId: null,
                  messages: [{ role: "user", content: [{ type: "text", text: `late ${WORD}` }] }],
                });
                await deferral.finish({ index });
              }
              const late = await searchConsole(audit.database.db, audit.database.capabilities, {
                query: `late ${WORD}`,
                limit: 10,
                probeRows: 0,
              });
              expect(late).toHaveLength(2);
              // Filtered, the rows the index does not hold yet are the subject's only.
              const lateOf = async (subjectUid: string) =>
                await searchConsole(audit.database.db, audit.database.capabilities, {
                  query: `late ${WORD}`,
                  limit: 10,
                  probeRows: 0,
                  subjectUid,
                });
              expect((await lateOf(b)).map((row) => row.subject_uid)).toEqual([b, b]);
              expect(await lateOf(a)).toEqual([]);
              await catchUpSearchIndex(audit.database, SERVER_CATCH_UP_PACE);
              expect((await checkSearchIndex(audit.database))[0]?.deferrals).toBe(0);
            }
          } finally {
            await server.app.close();
          }

          await expectEveryStatementNamesTheSubject(audit);
          // The owner of an id, found across subjects, once per page.
          expect(
            statementWith(audit, `select "subject_uid" from "ai_gateway_conversations" where "id"`),
          ).toContain(ACROSS_SUBJECTS);
          // A list of one subject names it; a list of every subject is marked.
          expect(
            statementWith(audit, `from "ai_gateway_conversations" as "c"`, `"c"."subject_uid" = `),
          ).not.toContain(ACROSS_SUBJECTS);
          expect(
            [...audit.statements].some(
              (text) =>
                text.includes(`from "ai_gateway_conversations" as "c"`) &&
                !text.includes(`"c"."subject_uid" = `) &&
                text.includes(ACROSS_SUBJECTS),
            ),
            "a list of every subject, marked",
          ).toBe(true);
          expectStatementRan(audit, "answered.subject_uid = c.subject_uid");
          // The newest message, the long poll's count, the model input: the owner named.
          statementWith(
            audit,
            `where "subject_uid" = `,
            `order by "created_at" desc, "depth" desc`,
          );
          statementWith(
            audit,
            `count(*) as "count" from "ai_gateway_messages" where "subject_uid"`,
          );
          statementWith(audit, `select "id", "request" from "ai_gateway_messages"`);
          // Search of one subject: the newest rows tried first, the text index (or ILIKE) and
          // the bodies all name it, unmarked, so PostgreSQL's plans are checked above to read
          // one partition.
          expectNamedNotMarked(audit, "message_scan", "m.subject_uid = ", "i.subject_uid = ");
          expectNamedNotMarked(
            audit,
            "m.subject_uid = ",
            "i.subject_uid = ",
            "b.subject_uid = ",
            "hits",
          );
          if (dialect === "sqlite") {
            expectNamedNotMarked(audit, "s.content match", "m.subject_uid = ");
            expectNamedNotMarked(audit, "s.content like", "m.subject_uid = ");
            expectNamedNotMarked(audit, "verbatim_search_deferrals", "m.subject_uid = ");
          } else {
            expectNamedNotMarked(
              audit,
              `replace("m"."content"::text, ' ', '') ilike`,
              "m.subject_uid = ",
            );
          }
          // Search of every subject: marked, each body read under its match's subject.
          expect(statementWith(audit, "b.subject_uid = hits.subject_uid")).toContain(
            ACROSS_SUBJECTS,
          );
          statementWith(audit, `as "body" from "ai_gateway_messages" where`, `"subject_uid" = `);
          statementWith(
            audit,
            `as "body" from "background_agent_job_turn_items" where`,
            `"subject_uid" = `,
          );
          if (dialect === "sqlite") {
            expect(
              statementWith(audit, `select max(rowid) as last from "ai_gateway_messages"`),
            ).toContain(ACROSS_SUBJECTS);
          }
        } finally {
          await seed.close();
          await audit.cleanup();
        }
      }, 120_000);
    },
  );
}
