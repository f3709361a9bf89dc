/**
 * Issue 18, the matching of recorded calls: random sessions whose clients extend, retry and fork
 * their history, several sessions interleaved and some calls of one session sent at the same
 * time, always give one conversation per session, and every history a client sent is a path of
 * stored nodes of that conversation. Clients that move cache_control and write one-text-block
 * content as a string (Claude Code does both) do not fork their chain.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { prefixHashes } from "../../packages/server/src/gateway/recording/chain-matching.js";
import { RecordedCalls } from "../../packages/server/src/gateway/recording/calls.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { propertyRuns } from "../support/property-runs.js";
import { sessionBatchesArbitrary } from "../support/session-steps.js";

interface Message {
  readonly role: "user" | "assistant";
  readonly text: string;
}

/** How a client writes a message this time: string or block, cache marker or not. */
function wire(message: Message, style: number, last: boolean): unknown {
  if (style % 2 === 0 && !last) return { role: message.role, content: message.text };
  const block: Record<string, unknown> = { type: "text", text: message.text };
  if (last || style % 3 === 0) block["cache_control"] = { type: "ephemeral" };
  return { role: message.role, content: [block] };
}

/** 12 runs in CI; more in `npm run test:properties` (test/support/property-runs.ts). */
const runs = propertyRuns(12);

describeEachDialect("recorded call chains", (getDatabase) => {
  it(
    "random sessions with forks, retries and interleaved concurrent calls reconstruct the chains the clients had",
    async () => {
      await fc.assert(
        fc.asyncProperty(sessionBatchesArbitrary(10), fc.nat(1000), async (batches, style) => {
          const recorder = new RecordedCalls(getDatabase());
          const subject = uniqueName("subject");
          const histories = new Map<number, Message[]>();
          const sent = new Map<number, Message[][]>();
          const conversationOf = new Map<number, Set<string>>();
          let counter = 0;
          for (const batch of batches) {
            // The calls of one batch run at the same time (several per session possible).
            const calls = batch.map((step) => {
              const session = step.session;
              let history = histories.get(session) ?? [
                { role: "user" as const, text: `session ${session} of ${subject}` },
              ];
              if (step.kind === "extend") {
                history = [
                  ...history,
                  { role: "assistant", text: `answer ${counter++}` },
                  { role: "user", text: step.text },
                ];
              } else if (step.kind === "fork") {
                const keep = Math.max(1, Math.min(history.length, step.keep));
                history = [
                  ...history.slice(0, keep),
                  { role: "user", text: `fork ${counter++} ${step.text}` },
                ];
              }
              histories.set(session, history);
              sent.set(session, [...(sent.get(session) ?? []), history]);
              const messages = history.map((message, index) =>
                wire(message, style + index + counter, index === history.length - 1),
              );
              const body = Buffer.from(JSON.stringify({ model: "m", messages }), "utf8");
              return recorder
                .record({
                  subjectUid: subject,
                  format: "anthropic-messages",
                  path: "/v1/messages",
                  model: "m",
                  messages,
                  requestHeaders: {},
                  requestBody: body,
                  statusCode: 200,
                  responseHeaders: { "content-type": "application/json" },
                  responseBody: Buffer.from("{}"),
                  durationMs: 1,
                })
                .then((result) => {
                  const set = conversationOf.get(session) ?? new Set<string>();
                  set.add(result.conversationId);
                  conversationOf.set(session, set);
                });
            });
            await Promise.all(calls);
          }
          // One conversation per session, none shared between sessions.
          const all = new Set<string>();
          for (const [, set] of conversationOf) {
            expect(set.size).toBe(1);
            const [only] = [...set];
            expect(all.has(only as string)).toBe(false);
            all.add(only as string);
          }
          // Every history a client sent is a path of nodes of its conversation.
          const db = getDatabase().db;
          for (const [session, histories] of sent) {
            const [conversation] = [...(conversationOf.get(session) ?? [])];
            for (const history of histories) {
              const hashes = prefixHashes(
                "anthropic-messages",
                history.map((message) => ({
                  role: message.role,
                  content: [{ type: "text", text: message.text }],
                })),
              );
              const nodes = await db
                .selectFrom("ai_gateway_chain_nodes")
                .select(["prefix_sha256", "parent_prefix_sha256", "conversation_id", "position"])
                .where("subject_uid", "=", subject)
                .where("prefix_sha256", "in", hashes)
                .orderBy("position")
                .execute();
              expect(nodes).toHaveLength(hashes.length);
              nodes.forEach((node, index) => {
                expect(node.conversation_id).toBe(conversation);
                expect(node.position).toBe(index);
                expect(node.parent_prefix_sha256).toBe(index === 0 ? null : hashes[index - 1]);
              });
            }
          }
        }),
        runs.parameters,
      );
    },
    runs.timeout(30_000),
  );

  it("a call extending the previous one names it; the matched count is the stored prefix", async () => {
    const recorder = new RecordedCalls(getDatabase());
    const subject = uniqueName("subject");
    const call = (messages: unknown[]) =>
      recorder.record({
        subjectUid: subject,
        format: "anthropic-messages",
        path: "/v1/messages",
        model: "m",
        messages,
        requestHeaders: { "x-api-key": "vbk_secret", accept: "application/json" },
        requestBody: Buffer.from(JSON.stringify({ messages })),
        statusCode: 200,
        responseHeaders: {},
        responseBody: Buffer.from("{}"),
        durationMs: 1,
      });
    const first = await call([{ role: "user", content: "a" }]);
    const second = await call([
      { role: "user", content: [{ type: "text", text: "a" }] },
      { role: "assistant", content: "b" },
      {
        role: "user",
        content: [{ type: "text", text: "c", cache_control: { type: "ephemeral" } }],
      },
    ]);
    expect(second).toMatchObject({
      conversationId: first.conversationId,
      matchedCount: 1,
      previousCallId: first.callId,
    });
    // A different first message: another conversation.
    const other = await call([{ role: "user", content: "z" }]);
    expect(other.conversationId).not.toBe(first.conversationId);
    expect(other.previousCallId).toBeNull();
    const rows = await getDatabase()
      .db.selectFrom("ai_gateway_recorded_calls")
      .select("request_headers")
      .where("subject_uid", "=", subject)
      .execute();
    for (const row of rows) expect(row.request_headers).not.toContain("vbk_secret");
  });

  it("a fork far back in a long chain matches the shared prefix (past the tail lookup)", async () => {
    const recorder = new RecordedCalls(getDatabase());
    const subject = uniqueName("subject");
    const call = (messages: unknown[]) =>
      recorder.record({
        subjectUid: subject,
        format: "openai-chat",
        path: "/v1/chat/completions",
        model: "m",
        messages,
        requestHeaders: {},
        requestBody: Buffer.from(JSON.stringify({ messages })),
        statusCode: 200,
        responseHeaders: {},
        responseBody: Buffer.from("{}"),
        durationMs: 1,
      });
    const long = Array.from({ length: 41 }, (_, index) => ({
      role: index % 2 === 0 ? "user" : "assistant",
      content: `message ${index}`,
    }));
    const first = await call(long);
    for (const keep of [1, 6, 17, 30, 33]) {
      const forked = await call([
        ...long.slice(0, keep),
        { role: "user", content: `fork at ${keep}` },
      ]);
      expect(forked.conversationId).toBe(first.conversationId);
      expect(forked.matchedCount).toBe(keep);
    }
  });
});
