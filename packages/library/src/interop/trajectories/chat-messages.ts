import type { TrajectoryItem } from "../../trajectory/items.js";
import {
  arrayOf,
  compactJson,
  field,
  recordOf,
  stringOf,
  type JsonRecord,
} from "../json-access.js";

/**
 * Chat-shaped messages (system, user, assistant with tool calls, tool) as trajectory items, for
 * the sources that keep the model's conversation in that shape (SWE-agent's history, Inspect's
 * sample messages). Tools ran in the agent's own sandbox: `local_dynamic`.
 */
export interface ChatMessageParts {
  readonly text: string;
  /** Image URLs (data: or https:). */
  readonly images: readonly string[];
  readonly reasoning: readonly string[];
  /** Parts of a type no item holds: reported by the caller. */
  readonly unknownParts: readonly string[];
}

export function chatParts(content: unknown): ChatMessageParts {
  const direct = stringOf(content);
  if (direct !== undefined) return { text: direct, images: [], reasoning: [], unknownParts: [] };
  const texts: string[] = [];
  const images: string[] = [];
  const reasoning: string[] = [];
  const unknownParts: string[] = [];
  for (const part of arrayOf(content) ?? []) {
    const record = recordOf(part);
    const type = stringOf(field(record, "type"));
    if (type === "text") texts.push(stringOf(field(record, "text")) ?? "");
    else if (type === "image") images.push(stringOf(field(record, "image")) ?? "");
    else if (type === "image_url")
      images.push(stringOf(field(recordOf(field(record, "image_url")), "url")) ?? "");
    else if (type === "reasoning") reasoning.push(stringOf(field(record, "reasoning")) ?? "");
    else unknownParts.push(type ?? "(no type)");
  }
  return {
    text: texts.join("\n"),
    images: images.filter((url) => url !== ""),
    reasoning,
    unknownParts,
  };
}

/** One tool call of a message: Inspect (`function`, object `arguments`) or OpenAI shape. */
export function toolCallItem(call: JsonRecord, fallbackId: string): TrajectoryItem {
  const functionRecord = recordOf(field(call, "function"));
  const name =
    stringOf(field(call, "function")) ?? stringOf(field(functionRecord, "name")) ?? "tool";
  const rawArguments = field(call, "arguments") ?? field(functionRecord, "arguments") ?? {};
  return {
    type: "tool_call",
    call_id: stringOf(field(call, "id")) ?? fallbackId,
    name: name === "" ? "tool" : name,
    arguments: stringOf(rawArguments) ?? compactJson(rawArguments),
    execution_mechanism: "local_dynamic",
  };
}
