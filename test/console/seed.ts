/**
 * Seeded data for the console's browser tests, written through the real stores: a
 * conversation with a tool call and its result, usage facts, an image, a fork, a failed
 * answer, a compression summary and text in Japanese and with an emoji; a 300-message
 * conversation; and a job whose turn holds each kind of item.
 */
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { compressContext } from "../../packages/server/src/gateway/conversations/compression.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";

export interface Seeded {
  readonly subject: string;
  /** The conversation with tools, a fork, a failure and a summary. */
  readonly weather: {
    readonly id: string;
    readonly firstUser: string;
    readonly call: string;
    readonly toolResult: string;
    readonly answer: string;
    readonly forkAnswer: string;
    readonly failed: string;
    readonly summary: string;
  };
  readonly long: { readonly id: string; readonly last: string; readonly count: number };
  readonly job: { readonly id: string; readonly itemKey: string };
}

export const JAPANESE_PHRASE = "東京の天気は晴れです";
export const EMOJI_TEXT = "Have a sunny day 🌞🌈";
export const LONG_LAST_TEXT = "This is message 300, the last one.";

const usage = (input: number, output: number) => ({
  input,
  output,
  cacheRead: 1200,
  cacheWrite: 64,
  webSearchRequests: 0,
});

export async function seedConsole(database: StoreDatabase, subject: string): Promise<Seeded> {
  const store = new GatewayMessageStore(database);
  const weather = await store.appendMessages(subject, {
    previousMessageId: null,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: `What is the weather in Oslo? ${JAPANESE_PHRASE}` },
          { type: "image", sha256: "a".repeat(64), mimeType: "image/png" },
        ],
      },
      {
        role: "assistant",
        content: [
          {
            type: "toolCall",
            id: "toolu_01Page",
            name: "get_weather",
            arguments: '{"city":"Oslo"}',
          },
        ],
        gateway: { model: "claude-sonnet-4-5", provider: "anthropic", usage: usage(812, 41) },
      },
      {
        role: "tool",
        content: [
          {
            type: "toolResult",
            callID: "toolu_01Page",
            toolName: "get_weather",
            isError: false,
            content: '{"forecast":"sunny","celsius":21}',
          },
        ],
      },
      {
        role: "assistant",
        content: [{ type: "text", text: `It is sunny in Oslo. ${EMOJI_TEXT}` }],
        gateway: {
          model: "claude-sonnet-4-5",
          provider: "anthropic",
          usage: usage(905, 22),
          stopReason: "end_turn",
          // The recorded call it came from (its request and response below, rcall_2).
          recordedCallId: "rcall_2",
        },
        request: {
          instructions: "Be brief and name the city.",
          tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }],
          maxOutputTokens: 256,
        },
      },
    ],
  });
  const [firstUser, call, toolResult, answer] = weather;
  if (
    firstUser === undefined ||
    call === undefined ||
    toolResult === undefined ||
    answer === undefined
  ) {
    throw new Error("the seed wrote fewer messages than it asked for");
  }
  const [forkAnswer] = await store.appendMessages(subject, {
    previousMessageId: firstUser.id,
    messages: [
      {
        role: "assistant",
        content: [{ type: "text", text: "A second answer on another branch: rain later." }],
        gateway: { model: "gpt-5", provider: "openai", usage: usage(700, 12) },
      },
    ],
  });
  const [question] = await store.appendMessages(subject, {
    previousMessageId: answer.id,
    messages: [{ role: "user", content: [{ type: "text", text: "And tomorrow?" }] }],
  });
  if (forkAnswer === undefined || question === undefined) throw new Error("seed: no fork");
  const started = await store.startMessage(subject, {
    previousMessageId: question.id,
    message: { role: "assistant", content: [], gateway: { model: "claude-sonnet-4-5" } },
  });
  const failed = await store.finishMessage(subject, started.id, {
    status: "failed",
    gateway: { error: { code: "upstream_overloaded", message: "the provider is overloaded" } },
  });
  const summary = await compressContext(store, subject, {
    anchorId: failed.id,
    summary: "The user asked about the weather in Oslo; it is sunny.",
  });

  let previous: string | null = null;
  let conversationId: string | undefined;
  let last = "";
  const count = 300;
  for (let start = 0; start < count; start += 100) {
    const written = await store.appendMessages(subject, {
      previousMessageId: previous,
      messages: Array.from({ length: 100 }, (_, offset) => {
        const index = start + offset + 1;
        const text =
          index === count ? LONG_LAST_TEXT : `Message ${index} of the long conversation.`;
        return {
          role: index % 2 === 1 ? ("user" as const) : ("assistant" as const),
          content: [{ type: "text" as const, text }],
        };
      }),
    });
    const tail = written[written.length - 1];
    if (tail === undefined) throw new Error("seed: long conversation");
    previous = tail.id;
    conversationId = tail.conversationId;
    last = tail.id;
  }

  const jobs = new BackgroundAgentJobs(database);
  const job = await jobs.createJob(subject, {
    conversationId: firstUser.conversationId,
    retryBudget: 0,
  });
  await jobs.startAttempt(subject, job.id);
  await jobs.startTurn(subject, job.id, [
    { item_key: "client:1", item: { type: "user_message", text: "Fix the failing test" } },
    {
      item_key: "agent:reasoning",
      item: { type: "reasoning", summary: ["Look at the test first."] },
    },
    {
      item_key: "agent:call",
      item: {
        type: "tool_call",
        call_id: "c1",
        name: "read_file",
        arguments: '{"path":"a.ts"}',
        execution_mechanism: "local_dynamic",
      },
    },
    {
      item_key: "agent:result",
      item: {
        type: "tool_result",
        call_id: "c1",
        name: "read_file",
        output: "export const a = 1;",
        is_error: false,
        execution_mechanism: "local_dynamic",
      },
    },
    {
      item_key: "agent:shell",
      item: {
        type: "command_execution",
        call_id: "c2",
        command: ["npm", "test"],
        status: "completed",
        output: "1 failed",
        exit_code: 1,
        execution_mechanism: "local_dynamic",
      },
    },
    {
      item_key: "agent:patch",
      item: {
        type: "file_change",
        call_id: "c3",
        changes: [
          {
            path: "a.ts",
            kind: "update",
            diff: "@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;",
          },
        ],
        status: "completed",
        execution_mechanism: "local_dynamic",
      },
    },
    {
      item_key: "agent:plan",
      item: { type: "plan", steps: [{ step: "run the tests", status: "completed" }] },
    },
    {
      item_key: "agent:error",
      item: { type: "error", message: "a flaky network call", retryable: true },
    },
    {
      item_key: "agent:1",
      item: { type: "agent_message", text: "The forecast is sunny and the test passes." },
    },
  ]);

  // Two calls the gateway recorded for the weather conversation (a stateless agent): the
  // second changed the system prompt, so the cached prefix broke.
  const recordedCall = (
    id: string,
    previous: string | null,
    system: string,
    usage: [number, number, number, number],
    at: string,
  ) => ({
    id,
    subject_uid: subject,
    conversation_id: firstUser.conversationId,
    wire_format: "anthropic-messages",
    path: "/v1/messages",
    model: "claude-sonnet-4-5",
    tip_prefix_sha256: `${id}-tip`,
    message_count: previous === null ? 1 : 3,
    matched_count: previous === null ? 0 : 1,
    previous_call_id: previous,
    status_code: 200,
    request_headers: "{}",
    request_body: JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
      messages:
        previous === null
          ? [{ role: "user", content: "Hello" }]
          : [
              { role: "user", content: "Hello" },
              { role: "assistant", content: "Hi" },
              { role: "user", content: "More" },
            ],
    }),
    response_headers: JSON.stringify({ "content-type": "application/json" }),
    // The answer as an upstream sends it (the console shows it raw and pretty-printed).
    response_body_base64: Buffer.from(
      JSON.stringify({
        id: `msg_${id}`,
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: "Hi" }],
        stop_reason: "end_turn",
        usage: { input_tokens: usage[0], output_tokens: usage[1] },
      }),
    ).toString("base64"),
    redacted: 0,
    input_tokens: usage[0],
    output_tokens: usage[1],
    cache_read_tokens: usage[2],
    cache_write_tokens: usage[3],
    duration_ms: 800,
    created_at: at,
  });
  await database.db
    .insertInto("ai_gateway_recorded_calls")
    .values([
      recordedCall("rcall_1", null, "You are terse.", [10, 5, 0, 1000], "2026-01-01T00:00:00.000Z"),
      recordedCall(
        "rcall_2",
        "rcall_1",
        "You are terse. Today is Tuesday.",
        [20, 5, 0, 1050],
        "2026-01-01T00:01:00.000Z",
      ),
    ])
    .execute();

  return {
    subject,
    weather: {
      id: firstUser.conversationId,
      firstUser: firstUser.id,
      call: call.id,
      toolResult: toolResult.id,
      answer: answer.id,
      forkAnswer: forkAnswer.id,
      failed: failed.id,
      summary: summary.id,
    },
    long: { id: conversationId ?? "", last, count },
    job: { id: job.id, itemKey: "agent:patch" },
  };
}
