import {
  toolCallArgumentText,
  toolResultText,
  type Block,
  type Message,
} from "verbatim-llm/history";
import type { GatewayMessage } from "../index.js";
import type { Usage } from "verbatim-llm/pricing";
import type { ProviderId, RoundResult } from "verbatim-llm/providers";
import type { CreateResponseBody, ResponseItem, ResponseObject } from "./schemas.js";

export { inputToMessages, type NewMessage } from "./input.js";

/**
 * From stored messages (src/history blocks) to the Responses API's items (input.ts goes the
 * other way): the model's answer is one assistant message whose text and tool calls are the
 * response's output items.
 */
/** Tool calls of a context, by call id → tool name. */
export function callsOf(messages: readonly Message[]): Map<string, string> {
  const calls = new Map<string, string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "toolCall") calls.set(block.id, block.name);
    }
  }
  return calls;
}

function textOf(blocks: readonly Block[]): string {
  return blocks
    .filter((block): block is Extract<Block, { type: "text" }> => block.type === "text")
    .map((block) => block.text)
    .join("");
}

const itemStatus = (status: string): string =>
  status === "in_progress" ? "in_progress" : status === "completed" ? "completed" : "incomplete";

/** The item id of a message's `index`-th tool call. */
export function functionCallItemId(messageId: string, index: number): string {
  return `fc_${messageId}_${index}`;
}

/** How tool calls come back: custom tools' as custom calls, namespaced ones split. */
export interface ToolNaming {
  /** Custom (free-form) tools by name. */
  readonly custom: ReadonlySet<string>;
  /** `namespace__name` → its namespace and name. */
  readonly namespaced: ReadonlyMap<string, { readonly namespace: string; readonly name: string }>;
}

export const NO_TOOL_NAMING: ToolNaming = { custom: new Set(), namespaced: new Map() };

/** The data URL of a kept image by its SHA-256; null when its bytes were not read. */
export type ImageUrls = (sha256: string) => string | null;
const NO_IMAGE_URLS: ImageUrls = () => null;

/** One stored message as Responses API items (input items and output items alike). */
export function messageToItems(message: GatewayMessage): ResponseItem[] {
  return namedItems(message, NO_TOOL_NAMING);
}

/** One stored message as items, its images given back as data URLs (input-images.ts). */
export function messageItemsWithImages(message: GatewayMessage, images: ImageUrls): ResponseItem[] {
  return namedItems(message, NO_TOOL_NAMING, images);
}

type ImagePart = { type: "input_image"; image_url: string | null; detail: "auto" };
const imageParts = (blocks: readonly Block[], images: ImageUrls): ImagePart[] =>
  blocks.flatMap((block) =>
    block.type === "image"
      ? [{ type: "input_image" as const, image_url: images(block.sha256), detail: "auto" as const }]
      : [],
  );

/** One stored message as items, its tool calls named as the request's tools declared them. */
export function namedItems(
  message: GatewayMessage,
  naming: ToolNaming,
  images: ImageUrls = NO_IMAGE_URLS,
): ResponseItem[] {
  const status = itemStatus(message.status);
  const items: ResponseItem[] = [];
  if (message.role === "tool") {
    // A tool's images follow its result (input.ts): given back as parts of its output.
    const toolImages = imageParts(message.content, images);
    message.content.forEach((block, index) => {
      if (block.type !== "toolResult") return;
      const text = toolResultText(block);
      items.push({
        type: "function_call_output",
        id: index === 0 ? message.id : `${message.id}_${index}`,
        call_id: block.callID,
        output:
          toolImages.length === 0 || items.length > 0
            ? text
            : [...(text === "" ? [] : [{ type: "input_text" as const, text }]), ...toolImages],
        status,
      });
    });
    return items;
  }
  const text = textOf(message.content);
  const hasText = message.content.some(
    (block) => block.type !== "toolCall" && block.type !== "toolResult",
  );
  if (hasText || message.content.length === 0) {
    items.push({
      type: "message",
      id: message.id,
      status,
      role:
        message.role === "assistant" ? "assistant" : (message.metadata.gateway.inputRole ?? "user"),
      content:
        message.role === "assistant"
          ? [{ type: "output_text", text, annotations: [] }]
          : [
              ...(text === "" && message.content.some((block) => block.type === "image")
                ? []
                : [{ type: "input_text" as const, text }]),
              ...imageParts(message.content, images),
            ],
    });
  }
  let call = 0;
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    const id = functionCallItemId(message.id, call);
    const namespaced = naming.namespaced.get(block.name);
    items.push(
      naming.custom.has(block.name)
        ? {
            type: "custom_tool_call",
            id,
            call_id: block.id,
            name: block.name,
            input: toolCallArgumentText(block),
            status,
          }
        : {
            type: "function_call",
            id,
            call_id: block.id,
            name: namespaced?.name ?? block.name,
            ...(namespaced === undefined ? {} : { namespace: namespaced.namespace }),
            arguments: toolCallArgumentText(block),
            status,
          },
    );
    call++;
  }
  return items;
}

export function usageObject(usage: Usage | undefined): ResponseObject["usage"] {
  if (usage === undefined) return null;
  const input = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.output,
  };
}

export interface ResponseFacts {
  /** The anchor the response continued (null at a conversation's start). */
  readonly previousResponseId: string | null;
  readonly instructions: string | null;
  readonly tools: CreateResponseBody["tools"];
  readonly maxOutputTokens: number | null;
  /** The other settings the request gave (echoed as sent; defaults where absent). */
  readonly echo?: Readonly<Record<string, unknown>> | undefined;
}

/** The tool naming of a request's tools (custom tools, namespaced function tools). */
export function toolNaming(tools: CreateResponseBody["tools"]): ToolNaming {
  const custom = new Set<string>();
  const namespaced = new Map<string, { namespace: string; name: string }>();
  for (const tool of (tools ?? []) as readonly {
    type: string;
    name?: unknown;
    tools?: unknown;
  }[]) {
    if (tool.type === "custom" && typeof tool.name === "string") custom.add(tool.name);
    if (tool.type === "namespace" && Array.isArray(tool.tools)) {
      for (const inner of tool.tools as { type: string; name: string }[]) {
        const name = `${String(tool.name)}__${inner.name}`;
        if (inner.type === "custom") custom.add(name);
        else namespaced.set(name, { namespace: String(tool.name), name: inner.name });
      }
    }
  }
  return { custom, namespaced };
}

function echoed<T>(
  echo: Readonly<Record<string, unknown>> | undefined,
  key: string,
  fallback: T,
): T {
  const value = echo?.[key];
  return value === undefined || value === null ? fallback : (value as T);
}

/** The response object of a stored output message. */
export function responseObject(output: GatewayMessage, facts: ResponseFacts): ResponseObject {
  const gateway = output.metadata.gateway;
  const status = output.status;
  return {
    id: output.id,
    object: "response",
    created_at: Math.floor(Date.parse(output.createdAt) / 1000),
    status,
    error:
      status === "failed"
        ? (gateway.error ?? { code: "upstream_failed", message: "the upstream request failed" })
        : null,
    incomplete_details:
      status === "incomplete"
        ? {
            reason:
              gateway.stopReason === "max_tokens"
                ? "max_output_tokens"
                : (gateway.stopReason ?? "unknown"),
          }
        : null,
    instructions: facts.instructions,
    max_output_tokens: facts.maxOutputTokens,
    model: gateway.model ?? "",
    output:
      status === "in_progress" || status === "failed"
        ? []
        : namedItems(output, toolNaming(facts.tools)),
    parallel_tool_calls: echoed(facts.echo, "parallel_tool_calls", true),
    previous_response_id: facts.previousResponseId,
    store: echoed(facts.echo, "store", true),
    temperature: echoed(facts.echo, "temperature", null),
    top_p: echoed(facts.echo, "top_p", null),
    text: echoed(facts.echo, "text", { format: { type: "text" } }),
    tool_choice: echoed(facts.echo, "tool_choice", "auto"),
    tools: facts.tools ?? [],
    truncation: echoed(facts.echo, "truncation", "disabled"),
    reasoning: echoed(facts.echo, "reasoning", null),
    background: echoed(facts.echo, "background", false),
    prompt_cache_key: echoed(facts.echo, "prompt_cache_key", null),
    safety_identifier: echoed(facts.echo, "safety_identifier", null),
    user: echoed(facts.echo, "user", null),
    // As OpenAI's: the conversation the request named (verbatim's conversation_id is always set).
    conversation: facts.echo?.["conversation"] === undefined ? null : { id: output.conversationId },
    usage: usageObject(gateway.usage),
    metadata: { ...output.metadata.caller },
    conversation_id: output.conversationId,
  };
}

/** True for an upstream reasoning item this server can give back (an object, type reasoning). */
function isReasoningItem(value: unknown): value is Extract<ResponseItem, { type: "reasoning" }> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const item = value as { type?: unknown; id?: unknown; summary?: unknown };
  return item.type === "reasoning" && typeof item.id === "string" && Array.isArray(item.summary);
}

/**
 * The response with the reasoning items its upstream returned, as received, in front of its
 * output (as OpenAI orders them): only OpenAI Responses returns them, with `encrypted_content`
 * when the request's `include` asked for it (passed on), so a client continuing without
 * previous_response_id can give them back (docs/server/responses.md, "Reasoning items"). They are the
 * provider's material and never stored (A23): GET /v1/responses/:id does not return them.
 */
export function withReasoning(
  response: ResponseObject,
  result: RoundResult | undefined,
  provider: ProviderId,
): ResponseObject {
  if (result === undefined || provider !== "openai-responses") return response;
  const reasoning = result.signed.leading.flatMap((item: unknown) =>
    isReasoningItem(item) ? [item] : [],
  );
  if (reasoning.length === 0 || response.status === "failed") return response;
  return { ...response, output: [...reasoning, ...response.output] };
}
