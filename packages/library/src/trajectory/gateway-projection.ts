import { base64Encode } from "../core/bytes.js";
import { toolCallArgumentText, toolResultText } from "../history/blocks.js";
import type { ChatMLContentPart, ChatMLMessage, ChatMLToolCall } from "../history/chatml.js";
import {
  IMAGE_OMITTED_TEXT,
  type ImageBytesLookup,
  type Message,
  type ToolResultBlock,
} from "../history/message.js";
import type { ExecutionMechanism } from "./items.js";
import type { ChatMLTrajectory, ChatMLTurnSpan } from "./trajectory.js";

/**
 * The ChatML projection of gateway conversation messages (the `src/history` model held in the
 * `content` of `ai_gateway_messages`) to the same shape job items project to (B9, B15):
 * - text blocks → string content (one block) or text parts; images → `image_url` parts with a
 *   `data:` URL when the bytes are at hand, else the omitted-image text;
 * - assistant `toolCall` blocks → `tool_calls`;
 * - `toolResult` blocks (in a `tool` or a `user` message) → one `tool` message each, with
 *   `metadata.execution_mechanism` (B10), before the rest of that message's blocks.
 * Turns (for turn-local call aliases) start at each projected `user` message.
 */
export interface GatewayProjectionOptions {
  /** Looks up image bytes by SHA-256; without it, or when missing, images become text. */
  readonly imageBytes?: ImageBytesLookup;
  /** Who ran a tool (default `local_dynamic`: the gateway's callers run their own tools). */
  readonly executionMechanism?: (block: ToolResultBlock) => ExecutionMechanism;
}

type Parts = ChatMLContentPart[];

function contentParts(message: Message, options: GatewayProjectionOptions): Parts {
  const parts: Parts = [];
  for (const block of message.content) {
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text });
        break;
      case "image": {
        const bytes = options.imageBytes?.(block.sha256);
        parts.push(
          bytes === undefined
            ? { type: "text", text: IMAGE_OMITTED_TEXT }
            : {
                type: "image_url",
                image_url: { url: `data:${block.mimeType};base64,${base64Encode(bytes)}` },
              },
        );
        break;
      }
      case "imageOmitted":
        parts.push({ type: "text", text: IMAGE_OMITTED_TEXT });
        break;
      case "toolCall":
      case "toolResult":
        break;
      default:
        block satisfies never;
    }
  }
  return parts;
}

/** One text part is written as a plain string, as ChatML readers expect. */
function simplify(parts: Parts): string | Parts {
  const only = parts[0];
  if (parts.length === 1 && only !== undefined && only.type === "text") return only.text;
  if (parts.every((part) => part.type === "text")) {
    return parts.length === 0 ? "" : parts;
  }
  return parts;
}

/** Projects one gateway message to ChatML messages (zero, one or several). */
export function projectGatewayMessage(
  message: Message,
  options: GatewayProjectionOptions = {},
): ChatMLMessage[] {
  const out: ChatMLMessage[] = [];
  const parts = contentParts(message, options);
  if (message.role === "assistant") {
    const calls: ChatMLToolCall[] = [];
    for (const block of message.content) {
      if (block.type === "toolCall") {
        calls.push({
          id: block.id,
          type: "function",
          function: { name: block.name, arguments: toolCallArgumentText(block) },
        });
      }
    }
    const content = parts.length === 0 ? null : simplify(parts);
    out.push(
      calls.length === 0
        ? { role: "assistant", content }
        : { role: "assistant", content, tool_calls: calls },
    );
    return out;
  }
  for (const block of message.content) {
    if (block.type !== "toolResult") continue;
    out.push({
      role: "tool",
      tool_call_id: block.callID,
      name: block.toolName,
      content: toolResultText(block),
      metadata: { execution_mechanism: options.executionMechanism?.(block) ?? "local_dynamic" },
    });
  }
  if (parts.length > 0 || out.length === 0) out.push({ role: "user", content: simplify(parts) });
  return out;
}

/** Projects a gateway conversation's messages (its context, in order) to a ChatML trajectory. */
export function projectGatewayMessagesToChatML(
  messages: readonly Message[],
  options: GatewayProjectionOptions = {},
): ChatMLTrajectory {
  const projected: ChatMLMessage[] = [];
  const turns: ChatMLTurnSpan[] = [];
  let current = 0;
  for (const message of messages) {
    for (const entry of projectGatewayMessage(message, options)) {
      if (entry.role === "user" && current > 0) {
        turns.push({ message_count: current });
        current = 0;
      }
      projected.push(entry);
      current++;
    }
  }
  if (current > 0) turns.push({ message_count: current });
  return {
    messages: projected,
    metadata: { redacted: false, content_truncated: false },
    turns,
  };
}
