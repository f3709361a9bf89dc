/**
 * OpenAI Responses request body (docs/providers.md, "OpenAI Responses"):
 * `{model, instructions?, input, tools?, max_output_tokens, store: false, prompt_cache_key?,
 * stream, ...extras}`. verbatim keeps the history itself, so nothing is stored at OpenAI
 * (`store: false`) and no `previous_response_id` is sent: every request carries the whole
 * input. Tool results are `function_call_output` items, tool calls `function_call` items with
 * the arguments as their stored text, each assistant text block one assistant `message` item.
 * Calls of a tool declared `kind: "custom"` are `custom_tool_call` items (the stored arguments
 * are the free-form input, sent unchanged) and their results `custom_tool_call_output` items.
 */
import { IMAGE_OMITTED_TEXT } from "../../history/message.js";
import { toolCallArgumentText, toolResultText } from "../../history/blocks.js";
import type { RenderInput, RenderWarning, RenderedRequest } from "../types.js";
import {
  checkOptions,
  generatedImageText,
  imageData,
  rawOf,
  signedByMessage,
  withExtras,
} from "../wire/common.js";
import { groupTurns, whereOf } from "../wire/history-turns.js";
import { cachedBlock } from "../wire/block-cache.js";
import { sortedRaw, writeJson, type WireValue } from "../wire/json-writer.js";

type WireObject = { [key: string]: WireValue | undefined };

export function renderResponses(input: RenderInput): RenderedRequest {
  const { history, options } = input;
  checkOptions(options);
  const warnings: RenderWarning[] = [];
  const signed = signedByMessage("openai-responses", input.signed, history, warnings);
  const items: WireValue[] = [];
  const custom = new Set(
    (options.tools ?? []).filter((tool) => tool.kind === "custom").map((tool) => tool.name),
  );
  for (const turn of groupTurns(history, warnings)) {
    const parts: WireValue[] = [];
    let lastMessage = -1;
    for (const placed of turn.blocks) {
      if (turn.role === "assistant" && placed.message !== lastMessage) {
        lastMessage = placed.message;
        const material = signed.get(placed.message);
        if (material !== undefined) for (const item of material.leading) items.push(rawOf(item));
      }
      const block = placed.block;
      switch (block.type) {
        case "text":
        case "imageOmitted": {
          const text = block.type === "text" ? block.text : IMAGE_OMITTED_TEXT;
          if (turn.role === "assistant") {
            items.push(
              cachedBlock("responses-assistant", placed, warnings, () => ({
                type: "message",
                role: "assistant",
                content: text,
              })),
            );
          } else {
            parts.push(
              cachedBlock("responses-user", placed, warnings, () => ({ type: "input_text", text })),
            );
          }
          break;
        }
        case "image":
          if (turn.role === "assistant") {
            items.push({
              type: "message",
              role: "assistant",
              content: generatedImageText(placed, warnings, "no image in an assistant message"),
            });
            break;
          }
          parts.push({
            type: "input_image",
            image_url: `data:${block.mimeType};base64,${imageData(input.images, placed)}`,
            detail: "auto",
          });
          break;
        case "toolCall":
          items.push(
            custom.has(block.name)
              ? cachedBlock("responses-custom-call", placed, warnings, () => ({
                  type: "custom_tool_call",
                  call_id: block.id,
                  name: block.name,
                  input: toolCallArgumentText(block),
                }))
              : cachedBlock("responses-call", placed, warnings, () => ({
                  type: "function_call",
                  call_id: block.id,
                  name: block.name,
                  arguments: toolCallArgumentText(block),
                })),
          );
          break;
        case "toolResult":
          items.push(
            custom.has(block.toolName)
              ? cachedBlock("responses-custom-output", placed, warnings, () => ({
                  type: "custom_tool_call_output",
                  call_id: block.callID,
                  output: toolResultText(block),
                }))
              : cachedBlock("responses-output", placed, warnings, () => ({
                  type: "function_call_output",
                  call_id: block.callID,
                  output: toolResultText(block),
                })),
          );
          break;
        default: {
          const unknown: never = block;
          throw new TypeError(
            `unknown block ${JSON.stringify(unknown)} at ${whereOf(placed.message)}`,
          );
        }
      }
    }
    if (parts.length > 0) items.push({ type: "message", role: "user", content: parts });
  }
  const cache = options.cache ?? {};
  if (cache.ttl !== undefined) {
    warnings.push({
      code: "cache_option_ignored",
      message: "OpenAI caches prefixes itself; a cache TTL is not sent",
      where: "options.cache.ttl",
    });
  }
  const tools = options.tools;
  const hosted = options.hostedTools ?? [];
  const body: WireObject = {
    model: options.model,
    instructions:
      options.system === undefined || options.system === "" ? undefined : options.system,
    input: items,
    tools:
      (tools === undefined || tools.length === 0) && hosted.length === 0
        ? undefined
        : [
            ...(tools ?? []).map((tool) =>
              tool.kind === "custom"
                ? {
                    type: "custom",
                    name: tool.name,
                    description: tool.description,
                    format: tool.format === undefined ? undefined : sortedRaw(tool.format),
                  }
                : {
                    type: "function",
                    name: tool.name,
                    description: tool.description,
                    parameters: sortedRaw(tool.inputSchema),
                    strict: tool.strict ?? false,
                  },
            ),
            ...hosted.map((tool) => sortedRaw(tool)),
          ],
    max_output_tokens: options.maxTokens,
    store: false,
    prompt_cache_key: cache.promptCacheKey,
    stream: options.stream ?? true,
  };
  return { body: writeJson(withExtras(body, options.extras)), warnings };
}
