import type { Block } from "verbatim-llm/history";
import {
  SseDecoder,
  createStreamParser,
  parseResponse,
  type ProviderId,
  type RoundResult,
} from "verbatim-llm/providers";
import type { WireFormat } from "./recorded-usage.js";

/**
 * The provider-neutral history of a recorded call (docs/server.md, "Recorded calls"): each wire
 * message of an Anthropic Messages or Chat Completions request as the gateway messages the store
 * keeps for `/v1/responses`, and the upstream's answer through the library's response parsers.
 * The raw bytes stay in the call's row; these are what the console and the Conversations API
 * show. What the history model has no place for is left out of these messages only (thinking
 * and its signatures, A23; an image's bytes become an `imageOmitted` block).
 */
export interface RecordedMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly content: readonly Block[];
  /** A Chat `system` or `developer` message (stored as a user message marked so). */
  readonly inputRole?: "system" | "developer";
}

type Json = Record<string, unknown>;

const record = (value: unknown): Json | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Json)
    : undefined;
const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** The provider whose wire format a recorded call speaks (for the response parsers). */
export function providerOfFormat(format: WireFormat): ProviderId {
  return format === "anthropic-messages" ? "anthropic" : "openai-chat";
}

/** The name of the tool call `callId` among the request's messages before `before`. */
function callName(
  format: WireFormat,
  messages: readonly unknown[],
  before: number,
  callId: string,
): string {
  for (let index = before - 1; index >= 0; index--) {
    const message = record(messages[index]);
    if (message?.["role"] !== "assistant") continue;
    if (format === "anthropic-messages") {
      for (const block of Array.isArray(message["content"]) ? message["content"] : []) {
        const call = record(block);
        if (call?.["type"] === "tool_use" && call["id"] === callId) return text(call["name"]);
      }
    } else {
      for (const entry of Array.isArray(message["tool_calls"]) ? message["tool_calls"] : []) {
        const call = record(entry);
        if (call?.["id"] === callId) return text(record(call["function"])?.["name"]);
      }
    }
  }
  return "";
}

function imageOmitted(mimeType: unknown): Block {
  const type = typeof mimeType === "string" && /^[a-z]+\/[a-z0-9.+-]+$/.test(mimeType);
  return { type: "imageOmitted", mimeType: type ? (mimeType as string) : "image/png" };
}

/** The text and images of a content value (a string or a list of parts). */
function contentBlocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const blocks: Block[] = [];
  for (const entry of Array.isArray(content) ? content : []) {
    const part = record(entry);
    const type = part?.["type"];
    if (type === "text") blocks.push({ type: "text", text: text(part?.["text"]) });
    else if (type === "image") blocks.push(imageOmitted(record(part?.["source"])?.["media_type"]));
    else if (type === "image_url") blocks.push(imageOmitted(undefined));
  }
  return blocks;
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  return contentBlocks(content)
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n\n");
}

function anthropicMessage(
  messages: readonly unknown[],
  index: number,
  message: Json,
): RecordedMessage[] {
  const content = message["content"];
  if (message["role"] === "assistant") {
    if (typeof content === "string")
      return [{ role: "assistant", content: [{ type: "text", text: content }] }];
    const blocks: Block[] = [];
    for (const entry of Array.isArray(content) ? content : []) {
      const block = record(entry);
      if (block?.["type"] === "text") blocks.push({ type: "text", text: text(block["text"]) });
      if (block?.["type"] === "tool_use") {
        blocks.push({
          type: "toolCall",
          id: text(block["id"]),
          name: text(block["name"]),
          arguments: JSON.stringify(block["input"] ?? {}),
        });
      }
    }
    return [{ role: "assistant", content: blocks }];
  }
  // A user message: its tool results first (as Anthropic requires them), then the rest.
  const results: Block[] = [];
  const rest: unknown[] = [];
  for (const entry of typeof content === "string"
    ? [content]
    : Array.isArray(content)
      ? content
      : []) {
    const block = record(entry);
    if (block?.["type"] === "tool_result") {
      const callID = text(block["tool_use_id"]);
      results.push({
        type: "toolResult",
        callID,
        toolName: callName("anthropic-messages", messages, index, callID),
        isError: block["is_error"] === true,
        content: toolResultText(block["content"]),
      });
    } else rest.push(typeof entry === "string" ? { type: "text", text: entry } : entry);
  }
  const out: RecordedMessage[] = [];
  if (results.length > 0) out.push({ role: "tool", content: results });
  const blocks = contentBlocks(rest);
  if (blocks.length > 0 || results.length === 0) out.push({ role: "user", content: blocks });
  return out;
}

function chatMessage(
  messages: readonly unknown[],
  index: number,
  message: Json,
): RecordedMessage[] {
  const role = message["role"];
  if (role === "system" || role === "developer") {
    return [{ role: "user", content: contentBlocks(message["content"]), inputRole: role }];
  }
  if (role === "tool") {
    const callID = text(message["tool_call_id"]);
    return [
      {
        role: "tool",
        content: [
          {
            type: "toolResult",
            callID,
            toolName: callName("openai-chat", messages, index, callID),
            isError: false,
            content: toolResultText(message["content"]),
          },
        ],
      },
    ];
  }
  if (role === "assistant") {
    const blocks = contentBlocks(message["content"]);
    for (const entry of Array.isArray(message["tool_calls"]) ? message["tool_calls"] : []) {
      const call = record(entry);
      const fn = record(call?.["function"]);
      blocks.push({
        type: "toolCall",
        id: text(call?.["id"]),
        name: text(fn?.["name"]),
        arguments: text(fn?.["arguments"]),
      });
    }
    return [{ role: "assistant", content: blocks }];
  }
  return [{ role: "user", content: contentBlocks(message["content"]) }];
}

/** The gateway messages of the request's wire message `index` (none for what is not one). */
export function recordedMessagesOf(
  format: WireFormat,
  messages: readonly unknown[],
  index: number,
): RecordedMessage[] {
  const message = record(messages[index]);
  if (message === undefined) return [];
  return format === "anthropic-messages"
    ? anthropicMessage(messages, index, message)
    : chatMessage(messages, index, message);
}

/**
 * The upstream's answer as a round result (text and tool calls), from the decoded response body
 * (JSON or a stream); undefined for an error status or a body the parsers cannot read.
 */
export function recordedAnswer(
  format: WireFormat,
  model: string,
  statusCode: number,
  body: string,
  streamed: boolean,
): RoundResult | undefined {
  if (statusCode < 200 || statusCode >= 300) return undefined;
  const provider = providerOfFormat(format);
  try {
    if (!streamed) return parseResponse(provider, body, model);
    const parser = createStreamParser(provider, model);
    const decoder = new SseDecoder();
    for (const event of decoder.push(Buffer.from(body, "utf8"))) parser.push(event);
    for (const event of decoder.end()) parser.push(event);
    return parser.finish();
  } catch {
    return undefined;
  }
}
