/**
 * Issue 18, the matching of `/v1/responses` requests without previous_response_id: random
 * sessions whose clients send their whole history (text answers, tool calls and their results,
 * system and developer messages), extend it, retry (the same request twice at once) and fork it,
 * several sessions at the same time, always give one conversation per session; the stored chain
 * of every answer is exactly the history its client sent plus the answer; and no input is
 * stored twice beside itself. Driven through the store and the matcher the service uses
 * (gateway/conversations/message-chains.ts), on SQLite and PostgreSQL.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import type { Block } from "../../packages/library/src/history/index.js";
import {
  RESPONSES_CHAIN_SEED,
  responseUnits,
  type MatchableMessage,
} from "../../packages/server/src/gateway/recording/chain-matching.js";
import {
  MessageChain,
  matchable,
} from "../../packages/server/src/gateway/conversations/message-chains.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import type { GatewayMessage } from "../../packages/server/src/gateway/conversations/message-types.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { insertCallerDeletion } from "../../packages/server/src/store/repositories/gateway-caller-deletions.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { propertyRuns } from "../support/property-runs.js";
import { sessionBatchesArbitrary, type SessionStep } from "../support/session-steps.js";

/** What the model answers to a request: text, tool calls, or both. */
function answerOf(counter: number): Block[] {
  const call = (index: number): Block => ({
    type: "toolCall",
    id: `call_${counter}_${index}`,
    name: "shell",
    arguments: JSON.stringify({ cmd: `echo ${counter}` }),
  });
  switch (counter % 4) {
    case 0:
      return [{ type: "text", text: `answer ${counter}` }];
    case 1:
      return [{ type: "text", text: `running ${counter}` }, call(0)];
    case 2:
      return [call(0), call(1)];
    default:
      return [
        { type: "text", text: "two " },
        { type: "text", text: `parts ${counter}` },
      ];
  }
}

/** The items a client gives back for an answer: a message for its text, one per tool call. */
function echoed(answer: readonly Block[]): MatchableMessage[] {
  const texts = answer.filter((block) => block.type === "text");
  const items: MatchableMessage[] = [];
  if (texts.length > 0) {
    const text = texts.map((block) => (block.type === "text" ? block.text : "")).join("");
    items.push({ role: "assistant", content: [{ type: "text", text }] });
  }
  for (const block of answer) {
    if (block.type === "toolCall") items.push({ role: "assistant", content: [block] });
  }
  return items;
}

/** The tool results a client sends for an answer's calls. */
function resultsFor(answer: readonly Block[]): MatchableMessage[] {
  return answer.flatMap((block): MatchableMessage[] =>
    block.type === "toolCall"
      ? [
          {
            role: "tool",
            content: [
              {
                type: "toolResult",
                callID: block.id,
                toolName: block.name,
                isError: false,
                content: `ran ${block.id}`,
              },
            ],
          },
        ]
      : [],
  );
}

/** One request as the Responses service stores it: the matched inputs, then the answer. */
async function respond(
  store: GatewayMessageStore,
  subject: string,
  inputs: readonly MatchableMessage[],
  answer: readonly Block[],
): Promise<GatewayMessage> {
  const chain = new MessageChain(store.database, subject, RESPONSES_CHAIN_SEED, inputs);
  const prepared = store.prepareAppend(subject, {
    previousMessageId: null,
    messages: [
      ...inputs.map((message) => ({
        role: message.role === "system" ? ("user" as const) : message.role,
        content: message.content,
        ...(message.inputRole === undefined ? {} : { gateway: { inputRole: message.inputRole } }),
      })),
      {
        role: "assistant" as const,
        content: [],
        status: "in_progress" as const,
        gateway: { model: "stub" },
      },
    ],
  });
  const stored = await store.appendPreparedMatching(prepared, chain);
  const output = stored[stored.length - 1] as GatewayMessage;
  const final = await store.finishMessage(subject, output.id, {
    status: "completed",
    content: answer,
  });
  await chain.answered(final);
  return final;
}

/** 25 runs in CI; more in `npm run test:properties` (test/support/property-runs.ts). */
const runs = propertyRuns(25);

const unitsOf = (messages: readonly MatchableMessage[]): string[] =>
  messages.flatMap(responseUnits);

/**
 * Runs the batches of steps of four sessions of one subject (the steps of a batch at once) and
 * checks what the property holds: one conversation per session, every answer's stored chain is
 * the history its client sent plus the answer, no input stored twice after the same message.
 */
async function checkSessions(
  database: StoreDatabase,
  batches: readonly SessionStep[][],
): Promise<void> {
  const store = new GatewayMessageStore(database);
  const subject = uniqueName("subject");
  const histories = new Map<number, MatchableMessage[]>();
  const lastAnswer = new Map<number, Block[]>();
  const conversationOf = new Map<number, Set<string>>();
  const sent: {
    inputs: MatchableMessage[];
    answer: GatewayMessage;
    /** An extension continues the answer it extends (one of a retry's). */
    continues: readonly string[];
  }[] = [];
  const answersOf = new Map<number, string[]>();
  let counter = 0;
  for (const batch of batches) {
    // One step per session per batch (a client waits for its answer), sessions at once.
    const steps = new Map(batch.map((step) => [step.session, step]));
    const calls = [...steps.values()].flatMap((step) => {
      const session = step.session;
      let history = histories.get(session) ?? [
        {
          role: "user",
          inputRole: "developer",
          content: [{ type: "text", text: `be brief, ${session}` }],
        },
        {
          role: "user",
          content: [{ type: "text", text: `session ${session} of ${subject}` }],
        },
      ];
      const previous = lastAnswer.get(session);
      if (step.kind === "extend" && previous !== undefined) {
        const results = resultsFor(previous);
        history = [
          ...history,
          ...echoed(previous),
          ...(results.length > 0
            ? results
            : [
                {
                  role: "user" as const,
                  content: [{ type: "text" as const, text: step.text }],
                },
              ]),
        ];
      } else if (step.kind === "fork") {
        const keep = Math.max(2, Math.min(history.length, step.keep));
        history = [
          ...history.slice(0, keep),
          {
            role: "user",
            content: [{ type: "text", text: `fork ${counter} ${step.text}` }],
          },
        ];
      }
      histories.set(session, history);
      const copies = step.kind === "retry" ? 2 : 1;
      const answer = answerOf(counter++);
      lastAnswer.set(session, answer);
      const inputs = history;
      const continues =
        step.kind === "extend" && previous !== undefined ? (answersOf.get(session) ?? []) : [];
      answersOf.set(session, []);
      return Array.from({ length: copies }, () =>
        respond(store, subject, inputs, answer).then((final) => {
          sent.push({ inputs, answer: final, continues });
          answersOf.get(session)?.push(final.id);
          const set = conversationOf.get(session) ?? new Set<string>();
          set.add(final.conversationId);
          conversationOf.set(session, set);
        }),
      );
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
  // The stored chain of every answer is the history its client sent, then the answer.
  for (const { inputs, answer, continues } of sent) {
    const chain = await store.readFullChain(subject, answer.id);
    if (continues.length > 0) {
      expect(chain.some((message) => continues.includes(message.id))).toBe(true);
    }
    expect(unitsOf(chain.map(matchable))).toEqual([
      ...unitsOf(inputs),
      ...responseUnits(matchable(answer)),
    ]);
  }
  // No input message is stored twice after the same message (only answers repeat).
  for (const conversation of all) {
    const messages = await store.listMessages(subject, conversation, { limit: 10_000 });
    const seen = new Set<string>();
    for (const message of messages) {
      if (message.metadata.gateway.model !== undefined) continue;
      if (message.status === "in_progress") continue;
      const key = `${message.previousMessageId}\n${unitsOf([matchable(message)]).join()}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
  }
}

describeEachDialect("responses chains without previous_response_id", (getDatabase) => {
  it(
    "random sessions with tool turns, forks, concurrent retries and interleaved sessions reconstruct the chains the clients had",
    async () => {
      await fc.assert(
        fc.asyncProperty(sessionBatchesArbitrary(12), (batches) =>
          checkSessions(getDatabase(), batches),
        ),
        runs.parameters,
      );
    },
    runs.timeout(120_000),
  );

  it("issue 31: the same fork made twice, keeping a retried answer's text without its tool call, stores that text once (seed 1794762132)", async () => {
    // The property's shrunk failing case: session 2's first request sent twice at once, then
    // extended, then forked twice after its developer message, user message and echoed text.
    await checkSessions(getDatabase(), [
      [
        { kind: "extend", session: 0, text: "" },
        { kind: "retry", session: 2 },
      ],
      [
        { kind: "extend", session: 2, text: "" },
        { kind: "fork", session: 0, keep: 0, text: "" },
      ],
      [{ kind: "fork", session: 2, keep: 3, text: "" }],
      [{ kind: "fork", session: 2, keep: 3, text: "" }],
    ]);
  });

  it("issue 31: a part of an answer a fork stored is continued by the next request that gives back the same part", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("subject");
    const opening: MatchableMessage[] = [
      { role: "user", inputRole: "developer", content: [{ type: "text", text: "be brief" }] },
      { role: "user", content: [{ type: "text", text: "run it" }] },
    ];
    const answer = answerOf(1);
    const [text] = echoed(answer);
    const fork = (said: string): MatchableMessage[] => [
      ...opening,
      text as MatchableMessage,
      { role: "user", content: [{ type: "text", text: said }] },
    ];
    await respond(store, subject, opening, answer);
    const first = await respond(store, subject, fork("no, stop"), answerOf(4));
    const second = await respond(store, subject, fork("no, wait"), answerOf(8));
    const firstChain = await store.readFullChain(subject, first.id);
    const secondChain = await store.readFullChain(subject, second.id);
    expect(secondChain).toHaveLength(5);
    expect(secondChain[2]?.id).toBe(firstChain[2]?.id);
  });

  it("a conversation its subject deleted is not continued: the session starts a new one, which its next request continues", async () => {
    const store = new GatewayMessageStore(getDatabase());
    const subject = uniqueName("subject");
    const question: MatchableMessage = { role: "user", content: [{ type: "text", text: "Q" }] };
    const answer: Block[] = [{ type: "text", text: "A" }];
    const first = await respond(store, subject, [question], answer);
    await insertCallerDeletion(getDatabase().db, {
      subjectUid: subject,
      objectId: first.conversationId,
      kind: "conversation",
      deletedAt: new Date().toISOString(),
    });
    const history = [question, ...echoed(answer)];
    const next: MatchableMessage = { role: "user", content: [{ type: "text", text: "Q2" }] };
    const second = await respond(store, subject, [...history, next], answer);
    expect(second.conversationId).not.toBe(first.conversationId);
    const third = await respond(
      store,
      subject,
      [...history, next, ...echoed(answer), next],
      [{ type: "text", text: "A3" }],
    );
    expect(third.conversationId).toBe(second.conversationId);
    const chain = await store.readFullChain(subject, third.id);
    expect(chain).toHaveLength(6);
    expect(chain[3]?.id).toBe(second.id);
    // A fork inside the old prefix is a fork of the new conversation, not a third one.
    const fork: MatchableMessage = { role: "user", content: [{ type: "text", text: "Q2'" }] };
    const fourth = await respond(store, subject, [...history, fork], answer);
    expect(fourth.conversationId).toBe(second.conversationId);
    expect((await store.readFullChain(subject, fourth.id)).length).toBe(4);
  });
});
