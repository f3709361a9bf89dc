/**
 * Anthropic Messages request body (docs/providers.md, "Anthropic"):
 * `{model, max_tokens, system?, tools?, messages, stream, ...extras}`. User and tool messages
 * become `user` messages (tool results first), assistant messages `assistant` messages; every
 * content is an array of blocks. One `cache_control` breakpoint goes on the last block of the
 * newest message, and a second one on the previous request's last block when 20 or more
 * blocks were added since (the cache looks back at most 20 blocks from a breakpoint).
 */
import { VerbatimError } from "../../core/errors.js";
import { IMAGE_OMITTED_TEXT } from "../../history/message.js";
import { toolResultText } from "../../history/blocks.js";
import type { RenderInput, RenderWarning, RenderedRequest, SignedMaterial } from "../types.js";
import {
  argumentsObject,
  checkOptions,
  generatedImageText,
  imageData,
  rawOf,
  signedByMessage,
  withExtras,
} from "../wire/common.js";
import { cachedBlock } from "../wire/block-cache.js";
import { groupTurns, type PlacedBlock } from "../wire/history-turns.js";
import { RawJson, sortedRaw, writeJson, type WireValue } from "../wire/json-writer.js";

type WireBlock = { [key: string]: WireValue | undefined };

/** Blocks added since the previous request at or above which a second breakpoint is placed. */
export const SECOND_BREAKPOINT_THRESHOLD = 20;

function renderBlock(
  placed: PlacedBlock,
  input: RenderInput,
  warnings: RenderWarning[],
): WireBlock {
  const block = placed.block;
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "imageOmitted":
      return { type: "text", text: IMAGE_OMITTED_TEXT };
    case "image":
      if (input.history[placed.message]?.role === "assistant") {
        return {
          type: "text",
          text: generatedImageText(placed, warnings, "no image in an assistant message"),
        };
      }
      return {
        type: "image",
        source: {
          type: "base64",
          media_type: block.mimeType,
          data: imageData(input.images, placed),
        },
      };
    case "toolCall":
      return {
        type: "tool_use",
        id: block.id,
        name: block.name,
        input: argumentsObject(placed, warnings),
      };
    case "toolResult":
      return block.isError
        ? {
            type: "tool_result",
            tool_use_id: block.callID,
            content: toolResultText(block),
            is_error: true,
          }
        : { type: "tool_result", tool_use_id: block.callID, content: toolResultText(block) };
    default: {
      const unknown: never = block;
      throw new TypeError(`unknown block ${JSON.stringify(unknown)}`);
    }
  }
}

interface RenderedMessage {
  readonly role: "user" | "assistant";
  readonly content: (WireBlock | RawJson)[];
  /** History message index of each own (non-signed) block, in content order; -1 for signed. */
  readonly origins: number[];
  /** The history block of each own block (undefined for signed material). */
  readonly placed: (PlacedBlock | undefined)[];
}

function leadingOf(material: SignedMaterial | undefined): RawJson[] {
  return material === undefined ? [] : material.leading.map(rawOf);
}

/** The running turn's `caller` of a programmatic tool call, sent back on its `tool_use`. */
function callerOf(material: SignedMaterial | undefined, placed: PlacedBlock): RawJson | undefined {
  const found = material?.toolCallCallers?.find((entry) => entry.block === placed.index);
  return found === undefined || placed.block.type !== "toolCall" ? undefined : rawOf(found.caller);
}

/** A history block's wire block, with its signed `caller` when the running turn holds one. */
function ownBlock(
  placed: PlacedBlock,
  input: RenderInput,
  material: SignedMaterial | undefined,
  warnings: RenderWarning[],
): WireBlock {
  const caller = callerOf(material, placed);
  const block = renderBlock(placed, input, warnings);
  return caller === undefined ? block : { ...block, caller };
}

export function renderAnthropic(input: RenderInput): RenderedRequest {
  const { history, options } = input;
  checkOptions(options);
  const warnings: RenderWarning[] = [];
  const signed = signedByMessage("anthropic", input.signed, history, warnings);
  const messages: RenderedMessage[] = [];
  for (const turn of groupTurns(history, warnings)) {
    const content: (WireBlock | RawJson)[] = [];
    const origins: number[] = [];
    const placedBlocks: (PlacedBlock | undefined)[] = [];
    let lastMessage = -1;
    for (const placed of turn.blocks) {
      if (placed.message !== lastMessage) {
        lastMessage = placed.message;
        for (const raw of leadingOf(signed.get(placed.message))) {
          content.push(raw);
          origins.push(-1);
          placedBlocks.push(undefined);
        }
      }
      const material = signed.get(placed.message);
      const native = material?.nativeBlocks?.find((entry) => entry.block === placed.index);
      if (native !== undefined) {
        // Within the turn, the native block the history keeps as text (a compaction).
        content.push(rawOf(native.value));
        origins.push(-1);
        placedBlocks.push(undefined);
        continue;
      }
      content.push(
        placed.block.type === "image" || callerOf(material, placed) !== undefined
          ? ownBlock(placed, input, material, warnings)
          : cachedBlock("anthropic", placed, warnings, (raised) =>
              renderBlock(placed, input, raised),
            ),
      );
      origins.push(placed.message);
      placedBlocks.push(placed);
    }
    messages.push({ role: turn.role, content, origins, placed: placedBlocks });
  }
  placeBreakpoints(messages, input, signed);
  const body = withExtras(
    {
      model: options.model,
      max_tokens: options.maxTokens ?? missingMaxTokens(),
      system: options.system === undefined || options.system === "" ? undefined : options.system,
      tools:
        options.tools === undefined || options.tools.length === 0
          ? undefined
          : options.tools.map((tool) => ({
              name: tool.name,
              description: tool.description,
              input_schema: sortedRaw(tool.inputSchema),
              strict: tool.strict === true ? true : undefined,
            })),
      messages: messages.map((message) => ({ role: message.role, content: message.content })),
      stream: options.stream ?? true,
    },
    options.extras,
  );
  return { body: writeJson(body), warnings };
}

function placeBreakpoints(
  messages: RenderedMessage[],
  input: RenderInput,
  signed: ReadonlyMap<number, SignedMaterial>,
): void {
  const cache = input.options.cache ?? {};
  if (cache.breakpoint === false) return;
  const control: WireValue =
    cache.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const last = messages[messages.length - 1];
  if (last === undefined) return;
  markLastOwnBlock(last, control, () => true, input, signed);
  const previous = cache.previousMessageCount;
  if (previous === undefined || previous <= 0) return;
  let added = 0;
  for (const message of messages) {
    for (const origin of message.origins) if (origin >= previous) added++;
  }
  if (added < SECOND_BREAKPOINT_THRESHOLD) return;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as RenderedMessage;
    if (markLastOwnBlock(message, control, (origin) => origin < previous, input, signed)) return;
  }
}

/** Puts `cache_control` on the last own block whose origin passes; false when none does. */
function markLastOwnBlock(
  message: RenderedMessage,
  control: WireValue,
  accept: (origin: number) => boolean,
  input: RenderInput,
  signed: ReadonlyMap<number, SignedMaterial>,
): boolean {
  for (let index = message.content.length - 1; index >= 0; index--) {
    const origin = message.origins[index] as number;
    if (origin < 0 || !accept(origin)) continue;
    const placed = message.placed[index] as PlacedBlock;
    message.content[index] = {
      ...ownBlock(placed, input, signed.get(placed.message), []),
      cache_control: control,
    };
    return true;
  }
  return false;
}

/** Anthropic requires `max_tokens`: a request without `options.maxTokens` is refused. */
function missingMaxTokens(): never {
  throw new VerbatimError(
    "provider_invalid_options",
    "Anthropic requires a largest output (max_tokens); options.maxTokens is absent",
    { where: "options.maxTokens", hint: "Give options.maxTokens for Anthropic requests" },
  );
}
