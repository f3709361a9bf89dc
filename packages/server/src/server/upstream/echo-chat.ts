/**
 * The echo's OpenAI Chat Completions (POST /v1/chat/completions, docs/cli.md): the request is
 * read as the Anthropic Messages body it stands for, so the one answer rule (echo-answer.ts)
 * decides, and the answer is written as a chat completion or as its stream's chunks.
 */
import { EchoRequestError, type EchoAnswer } from "./echo-answer.js";
import { pieces, slices } from "./echo-pieces.js";

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The text parts of a chat message's content, as text blocks. */
function textBlocks(content: unknown): JsonObject[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content
    .filter(isObject)
    .filter((part) => part["type"] === "text" && typeof part["text"] === "string")
    .map((part) => ({ type: "text", text: part["text"] }));
}

function functionName(holder: JsonObject): unknown {
  const fn = holder["function"];
  return isObject(fn) ? fn["name"] : holder["name"];
}

/** A chat body as the Anthropic Messages body the answer rule reads. */
export function messagesBodyOfChat(body: unknown): JsonObject {
  if (!isObject(body)) throw new EchoRequestError("the body is not a JSON object");
  const chat = body["messages"];
  if (!Array.isArray(chat) || !chat.every(isObject)) {
    throw new EchoRequestError("messages: expected an array of message objects");
  }
  const messages: JsonObject[] = [];
  let results: JsonObject[] | undefined;
  for (const message of chat) {
    if (message["role"] === "tool") {
      const result = {
        type: "tool_result",
        tool_use_id: message["tool_call_id"],
        content: textBlocks(message["content"]),
      };
      // Consecutive tool messages answer one turn's calls: one user message, as in Anthropic's.
      if (results !== undefined) results.push(result);
      else messages.push({ role: "user", content: (results = [result]) });
      continue;
    }
    results = undefined;
    const calls = Array.isArray(message["tool_calls"])
      ? message["tool_calls"].filter(isObject).map((call) => ({
          type: "tool_use",
          id: call["id"],
          name: functionName(call),
        }))
      : [];
    messages.push({
      role: message["role"] === "assistant" ? "assistant" : "user",
      content: [...textBlocks(message["content"]), ...calls],
    });
  }
  const tools = Array.isArray(body["tools"])
    ? body["tools"].filter(isObject).map((tool) => ({ name: functionName(tool) }))
    : [];
  return { messages, tools };
}

export interface ChatAnswerIds {
  readonly id: string;
  readonly callId: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

const usageOf = (ids: ChatAnswerIds) => ({
  prompt_tokens: ids.inputTokens,
  completion_tokens: ids.outputTokens,
  total_tokens: ids.inputTokens + ids.outputTokens,
});

const finishReason = (answer: EchoAnswer) => (answer.kind === "text" ? "stop" : "tool_calls");

/** The answer as one chat completion. */
export function chatCompletion(answer: EchoAnswer, ids: ChatAnswerIds, model: string): JsonObject {
  const message =
    answer.kind === "text"
      ? { role: "assistant", content: answer.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: ids.callId,
              type: "function",
              function: { name: answer.name, arguments: JSON.stringify(answer.input) },
            },
          ],
        };
  return {
    id: ids.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason(answer) }],
    usage: usageOf(ids),
  };
}

/** The answer as a stream's chunks, usage last when the request asked for it. */
export function chatChunks(
  answer: EchoAnswer,
  ids: ChatAnswerIds,
  model: string,
  includeUsage: boolean,
): JsonObject[] {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: JsonObject, finish: string | null = null): JsonObject => ({
    id: ids.id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const deltas =
    answer.kind === "text"
      ? [
          chunk({ role: "assistant", content: "" }),
          ...pieces(answer.text).map((content) => chunk({ content })),
        ]
      : [
          chunk({
            role: "assistant",
            content: null,
            tool_calls: [
              {
                index: 0,
                id: ids.callId,
                type: "function",
                function: { name: answer.name, arguments: "" },
              },
            ],
          }),
          ...slices(JSON.stringify(answer.input)).map((part) =>
            chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }),
          ),
        ];
  const usage = includeUsage
    ? [
        {
          id: ids.id,
          object: "chat.completion.chunk",
          created,
          model,
          choices: [],
          usage: usageOf(ids),
        },
      ]
    : [];
  return [...deltas, chunk({}, finishReason(answer)), ...usage];
}
