/**
 * OpenAI Chat Completions request body, shared with OpenRouter (docs/providers.md):
 * `{model, messages, tools?, max_completion_tokens | max_tokens, stream, stream_options?,
 * prompt_cache_key?, ...extras}`. The system prompt is the first message; each tool result is
 * a `tool` message right after the assistant's calls; the rest of a user turn is one `user`
 * message of content parts; an assistant turn is one `assistant` message whose `content` is
 * its text (a string for one text block, parts for several, null for none) and whose
 * `tool_calls` carry the arguments as their stored text.
 */
import { IMAGE_OMITTED_TEXT } from "../../history/message.js";
import { toolCallArgumentText, toolResultText } from "../../history/blocks.js";
import type {
  ProviderId,
  RenderInput,
  RenderWarning,
  RenderedRequest,
  SignedMaterial,
} from "../types.js";
import {
  checkOptions,
  generatedImageText,
  imageData,
  rawOf,
  signedByMessage,
  withExtras,
} from "../wire/common.js";
import { groupTurns, whereOf, type WireTurn } from "../wire/history-turns.js";
import { cachedBlock } from "../wire/block-cache.js";
import { RawJson, sortedRaw, writeJson, type WireValue } from "../wire/json-writer.js";

type WireObject = { [key: string]: WireValue | undefined };

export function renderChat(
  provider: "openai-chat" | "openrouter",
  input: RenderInput,
): RenderedRequest {
  const { history, options } = input;
  checkOptions(options);
  const warnings: RenderWarning[] = [];
  const signed = signedByMessage(provider, input.signed, history, warnings);
  const messages: WireValue[] = [];
  if (options.system !== undefined && options.system !== "") {
    messages.push({ role: "system", content: options.system });
  }
  const turns = groupTurns(history, warnings);
  turns.forEach((turn, index) => {
    if (turn.role === "assistant") messages.push(assistantMessage(turn, signed, warnings));
    else userMessages(turn, input, messages, warnings, index === turns.length - 1);
  });
  const cache = options.cache ?? {};
  if (provider === "openrouter") {
    placeOpenRouterBreakpoint(messages, input);
    if (cache.promptCacheKey !== undefined) {
      warnings.push({
        code: "cache_option_ignored",
        message: "OpenRouter does not take prompt_cache_key; it was not sent",
        where: "options.cache.promptCacheKey",
      });
    }
  } else if (cache.ttl !== undefined) {
    warnings.push({
      code: "cache_option_ignored",
      message: "OpenAI caches prefixes itself; a cache TTL is not sent",
      where: "options.cache.ttl",
    });
  }
  const stream = options.stream ?? true;
  const body: WireObject =
    provider === "openrouter"
      ? {
          model: options.model,
          messages,
          tools: toolsOf(input),
          max_tokens: options.maxTokens,
          stream,
        }
      : {
          model: options.model,
          messages,
          tools: toolsOf(input),
          max_completion_tokens: options.maxTokens,
          stream,
          stream_options: stream ? { include_usage: true } : undefined,
          prompt_cache_key: cache.promptCacheKey,
        };
  return { body: writeJson(withExtras(body, options.extras)), warnings };
}

function toolsOf(input: RenderInput): WireValue | undefined {
  const tools = input.options.tools;
  if (tools === undefined || tools.length === 0) return undefined;
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: sortedRaw(tool.inputSchema),
      strict: tool.strict === undefined ? undefined : tool.strict,
    },
  }));
}

function assistantMessage(
  turn: WireTurn,
  signed: Map<number, SignedMaterial>,
  warnings: RenderWarning[],
): WireObject {
  const texts: string[] = [];
  const calls: WireValue[] = [];
  const details: WireValue[] = [];
  let lastMessage = -1;
  for (const placed of turn.blocks) {
    if (placed.message !== lastMessage) {
      lastMessage = placed.message;
      const material = signed.get(placed.message);
      if (material !== undefined)
        for (const detail of material.reasoningDetails) details.push(rawOf(detail));
    }
    const block = placed.block;
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "imageOmitted":
        texts.push(IMAGE_OMITTED_TEXT);
        break;
      case "toolCall":
        calls.push(
          cachedBlock("chat-call", placed, warnings, () => ({
            id: block.id,
            type: "function",
            function: { name: block.name, arguments: toolCallArgumentText(block) },
          })),
        );
        break;
      case "image":
        texts.push(generatedImageText(placed, warnings, "no image in an assistant message"));
        break;
      case "toolResult":
        throw new TypeError(
          `${block.type} in an assistant turn at ${whereOf(placed.message, placed.index)}`,
        );
      default: {
        const unknown: never = block;
        throw new TypeError(`unknown block ${JSON.stringify(unknown)}`);
      }
    }
  }
  const content: WireValue =
    texts.length === 0
      ? null
      : texts.length === 1
        ? (texts[0] as string)
        : texts.map((text) => ({ type: "text", text }));
  return {
    role: "assistant",
    content,
    tool_calls: calls.length === 0 ? undefined : calls,
    reasoning_details: details.length === 0 ? undefined : details,
  };
}

function userMessages(
  turn: WireTurn,
  input: RenderInput,
  messages: WireValue[],
  warnings: RenderWarning[],
  last: boolean,
): void {
  const parts: WireValue[] = [];
  for (const placed of turn.blocks) {
    const block = placed.block;
    switch (block.type) {
      case "toolResult":
        messages.push(
          cachedBlock("chat-tool", placed, warnings, () => ({
            role: "tool",
            tool_call_id: block.callID,
            content: toolResultText(block),
          })),
        );
        break;
      case "text":
        parts.push(
          last
            ? { type: "text", text: block.text }
            : cachedBlock("chat-text", placed, warnings, () => ({
                type: "text",
                text: block.text,
              })),
        );
        break;
      case "imageOmitted":
        parts.push({ type: "text", text: IMAGE_OMITTED_TEXT });
        break;
      case "image":
        parts.push({
          type: "image_url",
          image_url: { url: `data:${block.mimeType};base64,${imageData(input.images, placed)}` },
        });
        break;
      case "toolCall":
        throw new TypeError(
          `a tool call in a user turn at ${whereOf(placed.message, placed.index)}`,
        );
      default: {
        const unknown: never = block;
        throw new TypeError(`unknown block ${JSON.stringify(unknown)}`);
      }
    }
  }
  if (parts.length > 0) messages.push({ role: "user", content: parts });
}

/**
 * OpenRouter passes `cache_control` on content parts through to Anthropic models: the
 * breakpoint goes on the last part of the newest message when that is a user message.
 */
function placeOpenRouterBreakpoint(messages: WireValue[], input: RenderInput): void {
  const cache = input.options.cache ?? {};
  if (cache.breakpoint === false || !input.options.model.startsWith("anthropic/")) return;
  const last = messages[messages.length - 1] as WireObject | undefined;
  if (last === undefined || last instanceof RawJson || last["role"] !== "user") return;
  const parts = last["content"] as WireObject[];
  const part = parts[parts.length - 1];
  if (part === undefined || part instanceof RawJson) return;
  parts[parts.length - 1] = {
    ...part,
    cache_control: cache.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" },
  };
}

export type ChatProvider = Extract<ProviderId, "openai-chat" | "openrouter">;
