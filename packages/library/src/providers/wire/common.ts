/** Pieces every renderer shares: option checks, images, argument objects, extras, signed material. */
import { VerbatimError } from "../../core/errors.js";
import { base64Encode } from "../../core/bytes.js";
import { safeParseStrictJson, type JsonObject } from "../../core/strict-json.js";
import { toolCallArgumentText } from "../../history/blocks.js";
import type { ImageBlock, ImageBytesLookup, ToolCallBlock } from "../../history/message.js";
import type {
  AttachedSignedMaterial,
  ProviderId,
  RenderOptions,
  RenderWarning,
  SignedMaterial,
} from "../types.js";
import { whereOf, type PlacedBlock } from "./history-turns.js";
import { RawJson, sortedJson, type WireValue } from "./json-writer.js";

export function checkOptions(options: RenderOptions): void {
  if (typeof options.model !== "string" || options.model === "") {
    throw new VerbatimError("provider_invalid_options", "the model is empty", {
      where: "options.model",
    });
  }
  if (
    options.maxTokens !== undefined &&
    (!Number.isSafeInteger(options.maxTokens) || options.maxTokens <= 0)
  ) {
    throw new VerbatimError(
      "provider_invalid_options",
      `maxTokens must be a positive integer, got ${String(options.maxTokens)}`,
      { where: "options.maxTokens" },
    );
  }
  for (const [index, tool] of (options.tools ?? []).entries()) {
    if (typeof tool.name !== "string" || tool.name === "") {
      throw new VerbatimError("provider_invalid_options", "a tool has no name", {
        where: `options.tools[${index}].name`,
      });
    }
  }
}

const base64Cache = new WeakMap<Uint8Array, string>();

/** The base64 of an image's stored bytes (cached per bytes object: history images repeat). */
export function imageData(images: ImageBytesLookup, placed: PlacedBlock): string {
  const block = placed.block as ImageBlock;
  const bytes = images(block.sha256);
  if (bytes === undefined) {
    throw new VerbatimError(
      "provider_image_missing",
      `the bytes of image ${block.sha256} are not held`,
      {
        where: whereOf(placed.message, placed.index),
        hint: "Pass an image lookup that holds every image block of the history",
      },
    );
  }
  let data = base64Cache.get(bytes);
  if (data === undefined) {
    data = base64Encode(bytes);
    base64Cache.set(bytes, data);
  }
  return data;
}

/**
 * The text sent in place of an image the model generated where it cannot go as an image:
 * Anthropic, OpenAI Chat, OpenAI Responses and OpenRouter take no image in an assistant
 * message; Gemini does, but not without its bytes. With a `generated_image_as_text` warning.
 */
export function generatedImageText(
  placed: PlacedBlock,
  warnings: RenderWarning[],
  reason: string,
): string {
  const block = placed.block as ImageBlock;
  warnings.push({
    code: "generated_image_as_text",
    message: `an image the model generated was sent as a text naming it (${reason})`,
    where: whereOf(placed.message, placed.index),
  });
  return `[Generated image: ${block.mimeType}, sha256 ${block.sha256}]`;
}

/** The key under which arguments that are not a JSON object are sent to object-taking formats. */
export const INVALID_ARGUMENTS_KEY = "invalid_json_arguments";

/**
 * The one fixed rule for wire formats that take tool-call arguments as an object (Anthropic
 * `input`, Gemini `args`), docs/providers.md "Arguments":
 * - empty (or whitespace-only) arguments are the empty object `{}`;
 * - arguments whose text is one valid JSON object are sent as that text, byte for byte
 *   (key order, spacing and escapes kept);
 * - anything else (invalid JSON, an array, a string, a number, a repeated key) is sent as
 *   `{"invalid_json_arguments": "<the text>"}`, with a warning.
 */
export function argumentsObject(placed: PlacedBlock, warnings: RenderWarning[]): RawJson {
  const text = toolCallArgumentText(placed.block as ToolCallBlock);
  if (text.trim() === "") return EMPTY_OBJECT;
  const first = text.trimStart().charCodeAt(0);
  if (first === 0x7b) {
    const parsed = safeParseStrictJson(text);
    if (
      parsed.ok &&
      parsed.value !== null &&
      typeof parsed.value === "object" &&
      !Array.isArray(parsed.value)
    ) {
      return new RawJson(text);
    }
  }
  warnings.push({
    code: "arguments_not_object",
    message: `the tool-call arguments are not a JSON object; sent as {"${INVALID_ARGUMENTS_KEY}": text}`,
    where: whereOf(placed.message, placed.index),
  });
  return new RawJson(`{${JSON.stringify(INVALID_ARGUMENTS_KEY)}:${JSON.stringify(text)}}`);
}
const EMPTY_OBJECT = new RawJson("{}");

/** Appends the extras (keys sorted, values sorted JSON) after the fields the renderer owns. */
export function withExtras(
  body: Record<string, WireValue | undefined>,
  extras: JsonObject | undefined,
  skip: readonly string[] = [],
): Record<string, WireValue | undefined> {
  if (extras === undefined) return body;
  for (const key of Object.keys(extras).sort()) {
    if (skip.includes(key)) continue;
    if (key in body) {
      throw new VerbatimError(
        "provider_extras_conflict",
        `the extra "${key}" is a field the renderer writes`,
        {
          where: `options.extras.${key}`,
          hint: "Set it through its render option instead",
        },
      );
    }
    const value = extras[key];
    if (value !== undefined) body[key] = new RawJson(sortedJson(value));
  }
  return body;
}

/** The signed material of this provider by assistant message index; others are warned about. */
export function signedByMessage(
  provider: ProviderId,
  signed: readonly AttachedSignedMaterial[] | undefined,
  history: readonly { readonly role: string }[],
  warnings: RenderWarning[],
): Map<number, SignedMaterial> {
  const map = new Map<number, SignedMaterial>();
  for (const attached of signed ?? []) {
    const target = history[attached.messageIndex];
    const same = attached.material.provider === provider;
    if (!same || target === undefined || target.role !== "assistant") {
      warnings.push({
        code: "signed_material_ignored",
        message: !same
          ? `signed material of ${attached.material.provider} is not sent to ${provider}`
          : "signed material is attached to a message that is not an assistant's",
        where: whereOf(attached.messageIndex),
      });
      continue;
    }
    map.set(attached.messageIndex, attached.material);
  }
  return map;
}

/** Raw JSON of a provider value as received (its key order kept). */
export function rawOf(value: unknown): RawJson {
  return new RawJson(JSON.stringify(value));
}
