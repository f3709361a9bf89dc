import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A Cline 3.51 task folder written at test time. The real Cline 3.51 folder found
 * (gmfstu/Online-Card-Architecture) states no licence and was removed (SOURCES.md, "Gaps"); the
 * Roo Code folders stay as the real files. This one is constructed, its content invented, its
 * shapes those Cline's own source writes, cline/cline (Apache-2.0) at v3.51.0
 * `dca0a8fa3eab6baf58bb3fb017583465e8d72759`:
 * - api_conversation_history.json: `ClineStorageMessage`s (src/shared/messages/content.ts; the
 *   user message at each request start and the assistant message after its stream, with
 *   `modelInfo`, `id` and `metrics` {tokens {prompt, completion, cached = cache writes + reads},
 *   cost}, src/core/task/index.ts recursivelyMakeClineRequests). Assistant content: a `thinking`
 *   block {thinking, signature, summary} (StreamResponseHandler getCurrentReasoning), a `text`
 *   block with `reasoning_details` (the thinking's summary) and `call_id`, then `tool_use` blocks
 *   {id, name, input[, call_id]} with `reasoning_details` only when there is no text
 *   (getAllFinalizedToolUses). Tool results (src/core/task/tools/utils/ToolResultUtils.ts
 *   pushToolResult): with the Anthropic provider, whose tool calls carry no `call_id`, the
 *   result goes back as a `text` block (the `"cline"` fallback id) and the call stays
 *   unanswered by a tool_result; with a provider that gives one (openai-native: `id` = the
 *   function call's id, `call_id` the call id), a `tool_result` {tool_use_id, call_id, content}.
 * - ui_messages.json: `ClineMessage`s (src/shared/ExtensionMessage.ts) written by `say`/`ask`
 *   with `modelInfo` {providerId, modelId, mode} and `conversationHistoryIndex` = the API
 *   history's length - 1 when written (src/core/task/message-state.ts addToClineMessages); each
 *   request's `api_req_started` is said before its user message is added, and its text is
 *   `JSON.stringify({request, tokensIn, tokensOut, cacheWrites, cacheReads, cost})` once the
 *   stream ends (src/core/task/utils.ts updateApiReqMsg).
 * - task_metadata.json: `TaskMetadata` {files_in_context, model_usage, environment_history}
 *   (src/core/context/context-tracking/ContextTrackerTypes.ts; a `model_usage` entry is added
 *   when a request starts with another model than the last entry's, ModelContextTracker).
 * The task: the user asks for a README; request 1 (Anthropic claude-sonnet-4-5, thinking, a
 * read_file call answered as text); the user switches to openai-native gpt-5; request 2 (a
 * write_to_file call answered by a tool_result); request 3 (attempt_completion, the task stops
 * awaiting the user: it ends inside a tool call).
 */

type Json = Record<string, unknown>;

/** The task id (Cline names a task by `Date.now()` when it starts). */
export const CLINE_NATIVE_TASK_ID = "1767225600000";
const t0 = Number(CLINE_NATIVE_TASK_ID);

const sonnet = { modelId: "claude-sonnet-4-5-20250929", providerId: "anthropic", mode: "act" };
const gpt5 = { modelId: "gpt-5-2025-08-07", providerId: "openai-native", mode: "act" };

/** What each request's api_req_started states once it ended, with its model and time. */
export const CLINE_NATIVE_REQUESTS = [
  {
    ts: t0 + 1_000,
    model: sonnet,
    info: { tokensIn: 3, tokensOut: 180, cacheWrites: 11_000, cacheReads: 0, cost: 0.043959 },
  },
  {
    ts: t0 + 30_000,
    model: gpt5,
    info: { tokensIn: 12_400, tokensOut: 310, cacheWrites: 0, cacheReads: 0, cost: 0.0186 },
  },
  {
    ts: t0 + 45_000,
    model: gpt5,
    info: { tokensIn: 900, tokensOut: 120, cacheWrites: 0, cacheReads: 12_288, cost: 0.003861 },
  },
] as const;

const task = "Add a README.md that says what this project is.";
const environment = (time: string, files: string): string =>
  `<environment_details>\n# Current Time\n${time}\n\n# Current Working Directory (/workspace/demo) Files\n${files}\n\n# Current Mode\nACT MODE\n</environment_details>`;
const packageJson = '{\n  "name": "demo",\n  "description": "A tiny demo of a task runner"\n}\n';
const readme = "# demo\n\nA tiny demo of a task runner.\n";

const metrics = (index: number): Json => {
  const info = CLINE_NATIVE_REQUESTS[index]?.info;
  return {
    tokens: {
      prompt: info?.tokensIn,
      completion: info?.tokensOut,
      cached: (info?.cacheWrites ?? 0) + (info?.cacheReads ?? 0),
    },
    cost: info?.cost,
  };
};

function apiHistory(): Json[] {
  return [
    {
      role: "user",
      content: [
        { type: "text", text: `<task>\n${task}\n</task>` },
        { type: "text", text: environment("1/1/2026, 12:00:00 AM (UTC)", "package.json") },
      ],
    },
    {
      role: "assistant",
      content: [
        {
          type: "thinking",
          thinking: "The user wants a README. I should read package.json to describe the project.",
          signature: "EqQBCkYIBhgCKkDconstructedsignatureAAAA",
          summary: [],
        },
        {
          type: "text",
          text: "I'll read package.json to see what the project is.",
          reasoning_details: [],
          call_id: "msg_01ConstructedSonnetAnswer",
        },
        {
          type: "tool_use",
          id: "toolu_01ConstructedReadFile",
          name: "read_file",
          input: { path: "package.json" },
        },
      ],
      modelInfo: sonnet,
      id: "msg_01ConstructedSonnetAnswer",
      metrics: metrics(0),
    },
    {
      role: "user",
      content: [
        // The Anthropic provider's tool call has no call_id: the result goes back as text.
        { type: "text", text: `[read_file for 'package.json'] Result:\n${packageJson}` },
        { type: "text", text: environment("1/1/2026, 12:00:30 AM (UTC)", "package.json") },
      ],
    },
    {
      role: "assistant",
      content: [
        {
          type: "text",
          text: "The project is a task runner demo. I'll write the README.",
          call_id: "msg_constructedgpt5answer1",
        },
        {
          type: "tool_use",
          id: "fc_constructed_write",
          name: "write_to_file",
          input: { path: "README.md", content: readme },
          call_id: "call_constructed_write",
        },
      ],
      modelInfo: gpt5,
      id: "resp_constructedgpt5answer1",
      metrics: metrics(1),
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "fc_constructed_write",
          call_id: "call_constructed_write",
          content:
            "[write_to_file for 'README.md'] Result:\nThe content was successfully saved to README.md.",
        },
        {
          type: "text",
          text: environment("1/1/2026, 12:00:45 AM (UTC)", "package.json\nREADME.md"),
        },
      ],
    },
    {
      role: "assistant",
      content: [
        {
          type: "tool_use",
          id: "fc_constructed_complete",
          name: "attempt_completion",
          input: { result: "I added README.md, which says what the project is." },
          call_id: "call_constructed_complete",
        },
      ],
      modelInfo: gpt5,
      id: "resp_constructedgpt5answer2",
      metrics: metrics(2),
    },
  ];
}

function uiMessages(): Json[] {
  const request = (index: number, text: string, historyIndex: number): Json => {
    const entry = CLINE_NATIVE_REQUESTS[index];
    return {
      ts: entry?.ts,
      type: "say",
      say: "api_req_started",
      text: JSON.stringify({ request: text, ...entry?.info }),
      modelInfo: entry?.model,
      conversationHistoryIndex: historyIndex,
    };
  };
  const say = (ts: number, kind: string, text: string, model: Json, index: number, more = {}) => ({
    ts: t0 + ts,
    type: "say",
    say: kind,
    text,
    ...more,
    modelInfo: model,
    conversationHistoryIndex: index,
  });
  const ask = (ts: number, kind: string, text: string, model: Json, index: number) => ({
    ts: t0 + ts,
    type: "ask",
    ask: kind,
    text,
    modelInfo: model,
    conversationHistoryIndex: index,
  });
  return [
    say(0, "text", task, sonnet, -1, { images: [], files: [] }),
    {
      ts: t0 + 500,
      type: "say",
      say: "checkpoint_created",
      modelInfo: sonnet,
      conversationHistoryIndex: -1,
      lastCheckpointHash: "0f3c2a9d1b7e4c5a6d8e9f0a1b2c3d4e5f6a7b8c",
      isCheckpointCheckedOut: false,
    },
    request(0, `<task>\n${task}\n</task>`, -1),
    say(4_000, "reasoning", "The user wants a README.", sonnet, 0, { partial: false }),
    say(5_000, "text", "I'll read package.json to see what the project is.", sonnet, 0, {
      partial: false,
    }),
    say(
      6_000,
      "tool",
      JSON.stringify({
        tool: "readFile",
        path: "package.json",
        content: "/workspace/demo/package.json",
      }),
      sonnet,
      0,
      { partial: false },
    ),
    request(1, `[read_file for 'package.json'] Result:\n${packageJson}`, 1),
    say(33_000, "text", "The project is a task runner demo. I'll write the README.", gpt5, 2, {
      partial: false,
    }),
    ask(
      34_000,
      "tool",
      JSON.stringify({ tool: "newFileCreated", path: "README.md", content: readme }),
      gpt5,
      2,
    ),
    request(
      2,
      "[write_to_file for 'README.md'] Result:\nThe content was successfully saved to README.md.",
      3,
    ),
    say(48_000, "completion_result", "I added README.md, which says what the project is.", gpt5, 4),
    ask(48_500, "completion_result", "", gpt5, 5),
  ];
}

function taskMetadata(): Json {
  return {
    files_in_context: [
      {
        path: "package.json",
        record_state: "active",
        record_source: "read_tool",
        cline_read_date: t0 + 6_000,
        cline_edit_date: null,
      },
      {
        path: "README.md",
        record_state: "active",
        record_source: "cline_edited",
        cline_read_date: null,
        cline_edit_date: t0 + 36_000,
      },
    ],
    model_usage: CLINE_NATIVE_REQUESTS.slice(0, 2).map((entry) => ({
      ts: entry.ts - 5,
      model_id: entry.model.modelId,
      model_provider_id: entry.model.providerId,
      mode: entry.model.mode,
    })),
    environment_history: [
      {
        ts: t0,
        os_name: "linux",
        os_version: "6.8.0",
        os_arch: "x64",
        host_name: "Visual Studio Code",
        host_version: "1.108.0",
        cline_version: "3.51.0",
      },
    ],
  };
}

/**
 * Writes the task folder under `root` as `<root>/saoudrizwan.claude-dev/tasks/<id>/` (the
 * extension's global storage layout) and returns its api_conversation_history.json.
 * `withModelInfo: false` writes it as a Cline of before `modelInfo` on messages: the models
 * are then only in task_metadata.json's `model_usage`.
 */
export function writeClineNativeTask(
  root: string,
  options: { withModelInfo?: boolean } = {},
): string {
  const dir = join(root, "saoudrizwan.claude-dev", "tasks", CLINE_NATIVE_TASK_ID);
  mkdirSync(dir, { recursive: true });
  const strip = (list: Json[]): Json[] =>
    options.withModelInfo === false ? list.map(({ modelInfo: _modelInfo, ...rest }) => rest) : list;
  const api = join(dir, "api_conversation_history.json");
  writeFileSync(api, JSON.stringify(strip(apiHistory())));
  writeFileSync(join(dir, "ui_messages.json"), JSON.stringify(strip(uiMessages())));
  writeFileSync(join(dir, "task_metadata.json"), JSON.stringify(taskMetadata(), null, 2));
  return api;
}
