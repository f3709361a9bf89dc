import type { ChatMLMessage } from "../../history/chatml.js";
import type { ImageBytesLookup, Message } from "../../history/message.js";
import { projectGatewayMessagesToChatML } from "../../trajectory/gateway-projection.js";

/** The line formats `verbatim export` writes (docs/interop.md, "Exports"). */
export const EXPORT_FORMATS = ["openai-jsonl", "chatml-jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  /** A system prompt to put first (format 1 keeps none in the history). */
  readonly system?: string;
  readonly images?: ImageBytesLookup;
}

/** OpenAI's chat fine-tuning message: no `metadata`, no `name` on tool messages. */
function openAIMessage(message: ChatMLMessage): Record<string, unknown> {
  switch (message.role) {
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.tool_calls === undefined || message.tool_calls.length === 0
          ? {}
          : { tool_calls: message.tool_calls }),
      };
    default:
      return { role: message.role, content: message.content };
  }
}

/**
 * One JSON line for one conversation history: `{"messages": [...]}`. `chatml-jsonl` is the
 * project's canonical ChatML (B15, with each message's metadata); `openai-jsonl` is OpenAI's
 * chat fine-tuning shape. The same history always gives the same bytes.
 */
export function exportLine(
  history: readonly Message[],
  format: ExportFormat,
  options: ExportOptions = {},
): string {
  const projected = projectGatewayMessagesToChatML(
    history,
    options.images === undefined ? {} : { imageBytes: options.images },
  );
  return chatMLLine(projected.messages, format, options.system);
}

/** One JSON line for ChatML messages (a projected job turn, or a projected history). */
export function chatMLLine(
  projected: readonly ChatMLMessage[],
  format: ExportFormat,
  system: string | undefined,
): string {
  const head: ChatMLMessage[] = system === undefined ? [] : [{ role: "system", content: system }];
  const messages = [...head, ...projected];
  const body = format === "openai-jsonl" ? messages.map(openAIMessage) : messages;
  return `${JSON.stringify({ messages: body })}\n`;
}

/** One line of an export, or why a package or rows file gave none. */
export interface ExportedPackage {
  readonly path: string;
  /** The JSON line, or undefined when the package has no readable history. */
  readonly line: string | undefined;
  readonly reason?: string;
}
