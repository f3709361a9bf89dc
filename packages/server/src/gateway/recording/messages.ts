import { SseDecoder, isStorableText } from "verbatim-llm/internal";
import type { Block } from "verbatim-llm/history";
import {
  createStreamParser,
  parseResponse,
  type ProviderId,
  type RoundResult,
} from "verbatim-llm/providers";
import type { HeldImage } from "../conversations/images.js";
import { imageFromBase64, imageFromUrl, omittedImage, type RecordedImage } from "./images.js";
import { record, text, type Json } from "./json-members.js";
import { geminiAnswer } from "./gemini-answer.js";
import { geminiMessagesOf } from "./gemini-messages.js";
import { ToolCallNames } from "./tool-names.js";
import type { WireFormat } from "./usage.js";
import { NOTED_IMAGE_URL_MAX_LENGTH, NOTED_IMAGE_URLS_MAX } from "../validation/checks.js";

/**
 * The provider-neutral history of a recorded call (docs/server/recorded-calls.md, "Recorded calls"): each wire
 * message of an Anthropic Messages or Chat Completions request (a Gemini content:
 * gemini-messages.ts) as the gateway messages the store
 * keeps for `/v1/responses`, and the upstream's answer through the library's response parsers.
 * The raw bytes stay in the call's row; these are what the console and the Conversations API
 * show. What the history model has no place for is left out of these messages only (thinking
 * and its signatures, A23); images are kept as /v1/responses keeps them (images.ts).
 */
export interface RecordedMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly content: readonly Block[];
  /** A Chat `system` or `developer` message (stored as a user message marked so). */
  readonly inputRole?: "system" | "developer";
  /** The bytes of its `image` blocks (kept in the subject's image store). */
  readonly images?: readonly HeldImage[];
  /** The URLs of its images named by URL (not fetched), by index of their `imageOmitted` block. */
  readonly imageUrls?: Readonly<Record<string, string>>;
}

/** The provider whose wire format a recorded call speaks (for the response parsers). */
export function providerOfFormat(format: WireFormat): ProviderId {
  if (format === "gemini-generate-content") return "gemini";
  return format === "anthropic-messages" ? "anthropic" : "openai-chat";
}

/** The image of an Anthropic `image` or Chat `image_url` part (undefined: not an image). */
function partImage(part: Json | undefined): RecordedImage | undefined {
  const type = part?.["type"];
  if (type === "image") {
    const source = record(part?.["source"]);
    if (source?.["type"] === "base64") return imageFromBase64(source["data"], source["media_type"]);
    if (source?.["type"] === "url") return imageFromUrl(source["url"]);
    return omittedImage(source?.["media_type"]);
  }
  if (type === "image_url") {
    const url = part?.["image_url"];
    return imageFromUrl(typeof url === "string" ? url : record(url)?.["url"]);
  }
  return undefined;
}

/** A URL the gateway facts can hold (a longer one, or one past the limit, stays in the call's row). */
const notable = (url: string, noted: number): boolean =>
  noted < NOTED_IMAGE_URLS_MAX && url.length <= NOTED_IMAGE_URL_MAX_LENGTH && isStorableText(url);

/** A message's blocks as they are built, with the bytes and URLs of its images. */
class Content {
  readonly blocks: Block[] = [];
  private readonly images: HeldImage[] = [];
  private readonly urls: Record<string, string> = {};

  /** Adds the text and images of a content value (a string or a list of parts). */
  add(content: unknown): this {
    if (typeof content === "string") {
      this.blocks.push({ type: "text", text: content });
      return this;
    }
    for (const entry of Array.isArray(content) ? content : []) {
      const part = record(entry);
      if (part?.["type"] === "text") this.blocks.push({ type: "text", text: text(part["text"]) });
      else this.addImage(partImage(part));
    }
    return this;
  }

  addImage(image: RecordedImage | undefined): void {
    if (image === undefined) return;
    if (image.image !== undefined) this.images.push(image.image);
    if (image.url !== undefined && notable(image.url, Object.keys(this.urls).length)) {
      this.urls[String(this.blocks.length)] = image.url;
    }
    this.blocks.push(image.block);
  }

  message(
    role: RecordedMessage["role"],
    inputRole?: RecordedMessage["inputRole"],
  ): RecordedMessage {
    return {
      role,
      content: this.blocks,
      ...(inputRole === undefined ? {} : { inputRole }),
      ...(this.images.length === 0 ? {} : { images: this.images }),
      ...(Object.keys(this.urls).length === 0 ? {} : { imageUrls: this.urls }),
    };
  }
}

/** The text of a tool's result (its text parts joined) and its images. */
function toolResultParts(content: unknown): {
  text: string;
  images: (RecordedImage | undefined)[];
} {
  if (typeof content === "string") return { text: content, images: [] };
  const texts: string[] = [];
  const images: (RecordedImage | undefined)[] = [];
  for (const entry of Array.isArray(content) ? content : []) {
    const part = record(entry);
    if (part?.["type"] === "text") texts.push(text(part["text"]));
    else images.push(partImage(part));
  }
  return { text: texts.join("\n\n"), images };
}

function anthropicMessage(names: ToolCallNames, index: number, message: Json): RecordedMessage[] {
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
  // A user message: its tool results first (as Anthropic requires them), then the rest. A
  // result's images follow it in its tool message, and a result with images starts a tool
  // message of its own (the Conversations API gives a tool message's images back as the output
  // of its first result, as /v1/responses keeps them).
  const tools: Content[] = [];
  const rest = new Content();
  for (const entry of typeof content === "string"
    ? [content]
    : Array.isArray(content)
      ? content
      : []) {
    const block = record(entry);
    if (block?.["type"] === "tool_result") {
      const callID = text(block["tool_use_id"]);
      const result = toolResultParts(block["content"]);
      let tool = tools[tools.length - 1];
      if (tool === undefined || result.images.length > 0) {
        tool = new Content();
        tools.push(tool);
      }
      tool.blocks.push({
        type: "toolResult",
        callID,
        toolName: names.nameOf(index, callID),
        isError: block["is_error"] === true,
        content: result.text,
      });
      for (const image of result.images) tool.addImage(image);
    } else rest.add(typeof entry === "string" ? entry : [entry]);
  }
  const out = tools.map((tool) => tool.message("tool"));
  if (rest.blocks.length > 0 || tools.length === 0) out.push(rest.message("user"));
  return out;
}

function chatMessage(names: ToolCallNames, index: number, message: Json): RecordedMessage[] {
  const role = message["role"];
  if (role === "system" || role === "developer") {
    return [new Content().add(message["content"]).message("user", role)];
  }
  if (role === "tool") {
    const callID = text(message["tool_call_id"]);
    const result = toolResultParts(message["content"]);
    const tool = new Content();
    tool.blocks.push({
      type: "toolResult",
      callID,
      toolName: names.nameOf(index, callID),
      isError: false,
      content: result.text,
    });
    for (const image of result.images) tool.addImage(image);
    return [tool.message("tool")];
  }
  if (role === "assistant") {
    const answer = new Content().add(message["content"]);
    for (const entry of Array.isArray(message["tool_calls"]) ? message["tool_calls"] : []) {
      const call = record(entry);
      const fn = record(call?.["function"]);
      answer.blocks.push({
        type: "toolCall",
        id: text(call?.["id"]),
        name: text(fn?.["name"]),
        arguments: text(fn?.["arguments"]),
      });
    }
    return [answer.message("assistant")];
  }
  return [new Content().add(message["content"]).message("user")];
}

/**
 * The gateway messages of the request's wire message `index` (none for what is not one).
 * `names`: the request's tool call names, kept across calls for the same request.
 */
export function recordedMessagesOf(
  format: WireFormat,
  messages: readonly unknown[],
  index: number,
  names: ToolCallNames = new ToolCallNames(format, messages),
): RecordedMessage[] {
  if (format === "gemini-generate-content") return geminiMessagesOf(messages, index);
  const message = record(messages[index]);
  if (message === undefined) return [];
  return format === "anthropic-messages"
    ? anthropicMessage(names, index, message)
    : chatMessage(names, index, message);
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
  if (format === "gemini-generate-content") return geminiAnswer(model, statusCode, body, streamed);
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
