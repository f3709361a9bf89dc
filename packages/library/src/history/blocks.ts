import {
  base64Decode,
  base64Encode,
  utf8DecodeLenient,
  utf8DecodeStrict,
  utf8Encode,
} from "../core/bytes.js";
import type { ToolCallBlock, ToolResultBlock } from "./message.js";

/** A tool call from its argument bytes: text when they are UTF-8, base64 otherwise (A11). */
export function toolCallFromBytes(id: string, name: string, bytes: Uint8Array): ToolCallBlock {
  const text = utf8DecodeStrict(bytes);
  return text === undefined
    ? { type: "toolCall", id, name, argumentsBase64: base64Encode(bytes) }
    : { type: "toolCall", id, name, arguments: text };
}

/** A tool result from its output bytes: text when they are UTF-8, base64 otherwise (A11). */
export function toolResultFromBytes(
  callID: string,
  toolName: string,
  isError: boolean,
  bytes: Uint8Array,
): ToolResultBlock {
  const text = utf8DecodeStrict(bytes);
  return text === undefined
    ? { type: "toolResult", callID, toolName, isError, contentBase64: base64Encode(bytes) }
    : { type: "toolResult", callID, toolName, isError, content: text };
}

/** The exact bytes of a tool call's arguments. */
export function toolCallArgumentBytes(block: ToolCallBlock): Uint8Array {
  return "arguments" in block
    ? utf8Encode(block.arguments)
    : (base64Decode(block.argumentsBase64) ?? new Uint8Array());
}

/** The exact bytes of a tool result's content. */
export function toolResultBytes(block: ToolResultBlock): Uint8Array {
  return "content" in block
    ? utf8Encode(block.content)
    : (base64Decode(block.contentBase64) ?? new Uint8Array());
}

/**
 * The text a wire format that takes strings gets for a tool call's arguments: the stored text,
 * or the UTF-8 decoding of the stored bytes with U+FFFD for invalid sequences.
 */
export function toolCallArgumentText(block: ToolCallBlock): string {
  return "arguments" in block ? block.arguments : utf8DecodeLenient(toolCallArgumentBytes(block));
}

/** The text a wire format gets for a tool result (U+FFFD replacement for non-UTF-8 bytes). */
export function toolResultText(block: ToolResultBlock): string {
  return "content" in block ? block.content : utf8DecodeLenient(toolResultBytes(block));
}
