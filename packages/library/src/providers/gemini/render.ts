/**
 * Gemini `generateContent` / `streamGenerateContent` request body (docs/providers.md,
 * "Gemini"): `{contents, systemInstruction?, tools?, generationConfig, ...extras}`; the model
 * and streaming are in the URL. User and tool messages are `user` contents (function
 * responses first), assistant messages `model` contents. Tool-call arguments go as an object
 * (`args`, by the fixed rule of `argumentsObject`); a tool result goes as
 * `{"output": text}`, or `{"error": text}` when it is an error. Thought signatures of the
 * running turn go back on the parts they came with.
 */
import { IMAGE_OMITTED_TEXT } from "../../history/message.js";
import { toolResultText } from "../../history/blocks.js";
import type { JsonObject } from "../../core/strict-json.js";
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
import { RawJson, sortedJson, sortedRaw, writeJson, type WireValue } from "../wire/json-writer.js";
import { VerbatimError } from "../../core/errors.js";

type WireObject = { [key: string]: WireValue | undefined };

function renderPart(
  placed: PlacedBlock,
  input: RenderInput,
  warnings: RenderWarning[],
): WireObject {
  const block = placed.block;
  switch (block.type) {
    case "text":
      return { text: block.text };
    case "imageOmitted":
      return { text: IMAGE_OMITTED_TEXT };
    case "image":
      // A generated image (in a model turn) whose bytes are not held is named, not refused.
      if (
        input.history[placed.message]?.role === "assistant" &&
        input.images(block.sha256) === undefined
      ) {
        return {
          text: generatedImageText(placed, warnings, "its bytes are not held"),
        };
      }
      return { inlineData: { mimeType: block.mimeType, data: imageData(input.images, placed) } };
    case "toolCall":
      return {
        functionCall: { id: block.id, name: block.name, args: argumentsObject(placed, warnings) },
      };
    case "toolResult":
      return {
        functionResponse: {
          id: block.callID,
          name: block.toolName,
          response: block.isError
            ? { error: toolResultText(block) }
            : { output: toolResultText(block) },
        },
      };
    default: {
      const unknown: never = block;
      throw new TypeError(`unknown block ${JSON.stringify(unknown)}`);
    }
  }
}

function signatureOf(material: SignedMaterial | undefined, index: number): string | undefined {
  if (material === undefined) return undefined;
  for (const entry of material.blockSignatures) if (entry.block === index) return entry.signature;
  return undefined;
}

export function renderGemini(input: RenderInput): RenderedRequest {
  const { history, options } = input;
  checkOptions(options);
  const warnings: RenderWarning[] = [];
  const signed = signedByMessage("gemini", input.signed, history, warnings);
  const contents: WireValue[] = [];
  for (const turn of groupTurns(history, warnings)) {
    const parts: (WireObject | RawJson)[] = [];
    const blocks = turn.blocks;
    for (let position = 0; position < blocks.length; position++) {
      const placed = blocks[position] as PlacedBlock;
      const material = turn.role === "assistant" ? signed.get(placed.message) : undefined;
      const startsMessage =
        position === 0 || (blocks[position - 1] as PlacedBlock).message !== placed.message;
      if (material !== undefined && startsMessage)
        for (const part of material.leading) parts.push(rawOf(part));
      const signature = signatureOf(material, placed.index);
      if (signature !== undefined) {
        parts.push({ ...renderPart(placed, input, warnings), thoughtSignature: signature });
      } else if (placed.block.type === "image") {
        parts.push(renderPart(placed, input, warnings));
      } else {
        parts.push(
          cachedBlock("gemini", placed, warnings, (raised) => renderPart(placed, input, raised)),
        );
      }
      const endsMessage =
        position === blocks.length - 1 ||
        (blocks[position + 1] as PlacedBlock).message !== placed.message;
      if (material !== undefined && endsMessage)
        for (const part of material.trailing) parts.push(rawOf(part));
    }
    contents.push({ role: turn.role === "assistant" ? "model" : "user", parts });
  }
  const cache = options.cache ?? {};
  if (
    cache.ttl !== undefined ||
    cache.previousMessageCount !== undefined ||
    cache.promptCacheKey !== undefined
  ) {
    warnings.push({
      code: "cache_option_ignored",
      message: "Gemini caches prefixes implicitly; cache options are not sent",
      where: "options.cache",
    });
  }
  const tools = options.tools;
  const body: WireObject = {
    contents,
    systemInstruction:
      options.system === undefined || options.system === ""
        ? undefined
        : { parts: [{ text: options.system }] },
    tools:
      tools === undefined || tools.length === 0
        ? undefined
        : [
            {
              functionDeclarations: tools.map((tool) => ({
                name: tool.name,
                description: tool.description,
                parametersJsonSchema: sortedRaw(tool.inputSchema),
              })),
            },
          ],
    generationConfig: generationConfig(options.maxTokens, options.extras),
  };
  if (Object.keys(body["generationConfig"] as WireObject).length === 0)
    body["generationConfig"] = undefined;
  return { body: writeJson(withExtras(body, options.extras, ["generationConfig"])), warnings };
}

/** `maxOutputTokens` first, then the members of `extras.generationConfig`, sorted. */
function generationConfig(
  maxTokens: number | undefined,
  extras: JsonObject | undefined,
): WireObject {
  const config: WireObject = maxTokens === undefined ? {} : { maxOutputTokens: maxTokens };
  const extra = extras?.["generationConfig"];
  if (extra === undefined) return config;
  if (extra === null || typeof extra !== "object" || Array.isArray(extra)) {
    throw new VerbatimError(
      "provider_invalid_options",
      "extras.generationConfig must be an object",
      {
        where: "options.extras.generationConfig",
      },
    );
  }
  for (const key of Object.keys(extra).sort()) {
    if (key === "maxOutputTokens") {
      throw new VerbatimError(
        "provider_extras_conflict",
        "maxOutputTokens is set by options.maxTokens",
        {
          where: "options.extras.generationConfig.maxOutputTokens",
        },
      );
    }
    const value = extra[key];
    if (value !== undefined) config[key] = new RawJson(sortedJson(value));
  }
  return config;
}
