import type { Usage } from "../../format/conversation-schema.js";
import type { Item } from "../../format/items.js";
import type { Block } from "../../history/message.js";
import type { ConversationBuilder } from "../conversation-builder.js";
import {
  arrayOf,
  compactJson,
  countOf,
  field,
  recordOf,
  stringOf,
  type JsonRecord,
} from "../json-access.js";
import {
  readParts,
  responseText,
  type FunctionResponsePart,
  type LeaveOut,
  type ReadParts,
} from "./parts.js";
import type { MessageAt } from "./records.js";

type ToolItem = Extract<Item, { type: "tool" }>;

/** The verbatim provider of Gemini CLI's calls: the price table knows its models as google's. */
export const GEMINI_PROVIDER = "gemini";

/** The result Gemini CLI records for a call the user cancelled (and gives an interrupted one). */
export const GEMINI_CANCELLED_RESULT = "[Operation Cancelled] Operation cancelled.";

/** What converting one session's messages keeps across messages. */
export interface MessageState {
  readonly builder: ConversationBuilder;
  /** The calls whose result the history has, so that a copy of it is not added twice. */
  readonly answered: Set<string>;
  /** Sub-agents the conversation ran: agent id → the id of the call that ran it. */
  readonly subagentCalls: Map<string, string>;
}

const COPY_OF_RESULT =
  "a copy of a result the call's toolCalls record holds (which is imported): Gemini CLI keeps both once its history is synced";
const COPY_OF_CALL =
  "a copy of a call the message's toolCalls record holds (which is imported with its result)";
const COPY_OF_THOUGHT =
  "a copy of the message's thought summaries (`thoughts`), which are imported as thinking items";

/**
 * Adds one message of a session to the conversation: `user` and `gemini` messages to the
 * history (with their tool calls and results), `info` and `warning` as notices and `error` as a
 * failure item. Returns false for a message type this importer does not know.
 */
export function addMessage(message: MessageAt, state: MessageState, leaveOut: LeaveOut): boolean {
  const { value } = message;
  const type = stringOf(field(value, "type"));
  const id = `R${message.record}.${message.id}`;
  const parts = readParts(field(value, "content"), state.builder, leaveOut);
  switch (type) {
    case "user":
      addUser(message, parts, state, leaveOut, id);
      return true;
    case "gemini":
      addGemini(message, parts, state, leaveOut, id);
      return true;
    case "info":
    case "warning":
      state.builder.notice(id, type, parts.texts.join("\n"));
      return true;
    case "error":
      state.builder.item({ id, type: "failure", message: parts.texts.join("\n") });
      return true;
    default:
      return false;
  }
}

function addUser(
  message: MessageAt,
  parts: ReadParts,
  state: MessageState,
  leaveOut: LeaveOut,
  id: string,
): void {
  const { builder } = state;
  for (const response of parts.responses) {
    const callID = response.id ?? "";
    if (state.answered.has(callID)) {
      leaveOut("functionResponse part", COPY_OF_RESULT);
      continue;
    }
    const { text, isError } = responseText(response.response);
    const added = builder.toolResult({
      type: "toolResult",
      callID,
      toolName: response.name,
      isError,
      content: text,
    });
    if (added) state.answered.add(callID);
    else
      leaveOut(
        "function response without its call",
        "no call with this id is in the imported history",
      );
  }
  if (parts.calls.length > 0)
    leaveOut("functionCall part in a user message", "only the model makes calls");
  if (parts.thoughts.length > 0)
    leaveOut("thought part in a user message", "only the model's thoughts are kept");
  const blocks: Block[] = [
    ...parts.texts.map((text): Block => ({ type: "text", text })),
    ...parts.images,
  ];
  builder.user(blocks);
  if (blocks.length === 0) return;
  const shown = readParts(field(message.value, "displayContent"), builder, () => undefined);
  const text = (shown.texts.length > 0 ? shown.texts : parts.texts).join("\n");
  if (text.startsWith("<session_context>")) builder.notice(id, "sessionContext", text);
  else
    builder.item({
      id,
      type: "user",
      text,
      ...(parts.images.length > 0 ? { hasImage: true } : {}),
    });
}

function addGemini(
  message: MessageAt,
  parts: ReadParts,
  state: MessageState,
  leaveOut: LeaveOut,
  id: string,
): void {
  const { builder } = state;
  const { value } = message;
  const thoughts = arrayOf(field(value, "thoughts")) ?? [];
  thoughts.forEach((thought, index) => {
    const record = recordOf(thought);
    const subject = stringOf(field(record, "subject")) ?? "";
    const description = stringOf(field(record, "description")) ?? "";
    const text = subject === "" ? description : `**${subject}**\n\n${description}`;
    if (text !== "") builder.item({ id: `${id}.thought${index}`, type: "thinking", text });
  });
  if (thoughts.length === 0)
    parts.thoughts.forEach((text, index) =>
      builder.item({ id: `${id}.thought${index}`, type: "thinking", text }),
    );
  else if (parts.thoughts.length > 0) leaveOut("thought part", COPY_OF_THOUGHT);
  const blocks: Block[] = [
    ...parts.texts.filter((text) => text !== "").map((text): Block => ({ type: "text", text })),
    ...parts.images,
  ];
  const text = parts.texts.join("");
  if (text !== "") builder.item({ id, type: "assistant", text });
  const records = (arrayOf(field(value, "toolCalls")) ?? []).flatMap((entry) => {
    const record = recordOf(entry);
    return record === undefined ? [] : [record];
  });
  const callIds = records.map(
    (record, index) => stringOf(field(record, "id")) ?? `call_R${message.record}_${index}`,
  );
  const items = records.map((record, index) => {
    const callID = callIds[index] ?? "";
    const item = addCall(builder, blocks, `${id}.call${index}`, {
      id: callID,
      name: stringOf(field(record, "name")) ?? "",
      args: field(record, "args"),
      summary: stringOf(field(record, "description")) ?? "",
    });
    const agentId = stringOf(field(record, "agentId"));
    if (agentId !== undefined && !state.subagentCalls.has(agentId))
      state.subagentCalls.set(agentId, callID);
    return item;
  });
  parts.calls.forEach((call, index) => {
    if (call.id !== undefined && callIds.includes(call.id)) {
      leaveOut("functionCall part", COPY_OF_CALL);
      return;
    }
    const callID = call.id ?? `call_R${message.record}_part${index}`;
    addCall(builder, blocks, `${id}.part${index}`, { ...call, id: callID });
  });
  builder.assistant(message.id, blocks);
  const model = stringOf(field(value, "model"));
  if (model !== undefined) {
    builder.model = model;
    builder.provider = GEMINI_PROVIDER;
  }
  const usage = usageOf(recordOf(field(value, "tokens")));
  if (usage !== undefined) builder.usage(message.id, usage, model === undefined ? {} : { model });
  else if (recordOf(field(value, "tokens")) !== undefined)
    leaveOut("tokens with every count 0", "Gemini CLI recorded no counts for this call");
  records.forEach((record, index) => {
    const callID = callIds[index] ?? "";
    addResult(record, callID, callIds, state, leaveOut);
    const item = items[index];
    const status = stringOf(field(record, "status"));
    if (item !== undefined && status === "cancelled" && state.answered.has(callID))
      item.status = "cancelled";
  });
}

/**
 * A call of the model: a `toolCall` block added to `blocks` (arguments as compact JSON) and a
 * running `tool` item (its status set when its result comes).
 */
export function addCall(
  builder: ConversationBuilder,
  blocks: Block[],
  itemId: string,
  call: {
    readonly id: string;
    readonly name: string;
    readonly args: unknown;
    readonly summary?: string;
  },
): ToolItem {
  const argumentText = compactJson(call.args ?? {});
  blocks.push({ type: "toolCall", id: call.id, name: call.name, arguments: argumentText });
  const item: ToolItem = {
    id: itemId,
    type: "tool",
    name: call.name,
    status: "running",
    callID: call.id,
    detail: argumentText,
    ...(call.summary === undefined || call.summary === "" ? {} : { summary: call.summary }),
  };
  builder.item(item);
  return item;
}

/** A tool call record's result: its own functionResponse, other parts of it, its status. */
function addResult(
  record: JsonRecord,
  callID: string,
  siblings: readonly string[],
  state: MessageState,
  leaveOut: LeaveOut,
): void {
  const display = field(record, "resultDisplay");
  if (display !== undefined && display !== "" && display !== null)
    leaveOut(
      "tool resultDisplay",
      "Gemini CLI's display of a result (a diff, a terminal screen); the result the model got is imported",
    );
  const result = field(record, "result");
  if (result === undefined || result === null) return;
  const parts = readParts(result, state.builder, leaveOut);
  const name = stringOf(field(record, "name")) ?? "";
  const own = ownResponse(parts.responses, callID, name);
  for (const response of parts.responses) {
    if (response === own || (response.id !== undefined && siblings.includes(response.id))) continue;
    leaveOut("functionResponse of another call", "no call of this message has its id");
  }
  const answer = own === undefined ? undefined : responseText(own.response);
  const texts = [...(answer === undefined ? [] : [answer.text]), ...parts.texts];
  const status = stringOf(field(record, "status"));
  const added = state.builder.toolResult(
    {
      type: "toolResult",
      callID,
      toolName: name,
      isError: status === "error" || status === "cancelled" || answer?.isError === true,
      content: texts.join("\n"),
    },
    parts.images,
  );
  if (added) state.answered.add(callID);
}

/** The response of a call among a result's parts (newer versions keep the whole tool turn). */
function ownResponse(
  responses: readonly FunctionResponsePart[],
  callID: string,
  name: string,
): FunctionResponsePart | undefined {
  return (
    responses.find((response) => response.id === callID) ??
    (responses.length === 1 && responses[0]?.id === undefined ? responses[0] : undefined) ??
    responses.find((response) => response.id === undefined && response.name === name)
  );
}

/**
 * Gemini CLI's `tokens` (the API's usageMetadata: `input` is the whole prompt, cached part
 * included; `tool` is the tool-use prompt; `thoughts` are billed as output) in format 1's terms
 * (A7). Undefined when every count is 0 (no counts were recorded).
 */
export function usageOf(tokens: JsonRecord | undefined): Usage | undefined {
  if (tokens === undefined) return undefined;
  const input = countOf(field(tokens, "input"));
  const cached = countOf(field(tokens, "cached"));
  const tool = countOf(field(tokens, "tool"));
  const output = countOf(field(tokens, "output"));
  const thoughts = countOf(field(tokens, "thoughts"));
  if (input + cached + tool + output + thoughts === 0) return undefined;
  return {
    input: Math.max(0, input + tool - cached),
    output: output + thoughts,
    cacheRead: Math.min(cached, input + tool),
    cacheWrite: 0,
    webSearchRequests: 0,
  };
}
