/**
 * Which wire format wrote a request body, from its shape (docs/providers.md, "The cache-prefix
 * checker"). `contents` is Gemini and `input` OpenAI Responses. A `messages` body is:
 * - `anthropic` when something only Anthropic takes is there: a top-level `system`,
 *   `thinking`, `top_k` or `stop_sequences`, a `cache_control` key, a content block of an
 *   Anthropic type (`tool_use`, `tool_result`, `thinking`, `image` with a `source`, …), a tool
 *   with `input_schema`, or `max_tokens` with every message's content a list of blocks and
 *   nothing only Chat takes;
 * - `openrouter` when an OpenRouter field is there (`provider`, `models`, `transforms`,
 *   `route`, `plugins`, `usage`, `reasoning`, or `reasoning_details` on a message);
 * - `openai-chat` otherwise: a plain Chat body (string content, `system`/`developer`/`tool`
 *   roles, `tool_calls`, function tools, `max_tokens` or `max_completion_tokens`).
 */
import type { ProviderId } from "../types.js";
import { memberOf, stringValue, type JsonNode } from "./json-tree.js";

const ANTHROPIC_TOP_LEVEL = ["system", "thinking", "top_k", "stop_sequences", "anthropic_version"];
const OPENROUTER_TOP_LEVEL = [
  "provider",
  "models",
  "transforms",
  "route",
  "plugins",
  "usage",
  "reasoning",
];
const CHAT_ONLY_TOP_LEVEL = [
  "max_completion_tokens",
  "stream_options",
  "prompt_cache_key",
  "n",
  "response_format",
  "reasoning_effort",
  "logprobs",
  "frequency_penalty",
  "presence_penalty",
  "seed",
  "parallel_tool_calls",
  "modalities",
];
const ANTHROPIC_BLOCK_TYPES = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "document",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "compaction",
  "search_result",
  "container_upload",
]);
const CHAT_ROLES = new Set(["system", "developer", "tool", "function"]);

function itemsOf(node: JsonNode | undefined): readonly JsonNode[] {
  return node?.kind === "array" ? node.items : [];
}

function hasCacheControl(node: JsonNode): boolean {
  if (node.kind === "object") {
    return node.members.some(
      (member) => member.key === "cache_control" || hasCacheControl(member.value),
    );
  }
  return node.kind === "array" && node.items.some(hasCacheControl);
}

function isAnthropicBlock(block: JsonNode): boolean {
  const type = stringValue(memberOf(block, "type"));
  if (type === undefined) return false;
  if (ANTHROPIC_BLOCK_TYPES.has(type)) return true;
  return type === "image" && memberOf(block, "source") !== undefined;
}

/** Which provider wrote a body, from its shape. */
export function detectProvider(root: JsonNode): ProviderId {
  if (memberOf(root, "contents") !== undefined) return "gemini";
  if (memberOf(root, "input") !== undefined) return "openai-responses";
  const has = (key: string) => memberOf(root, key) !== undefined;
  const messages = itemsOf(memberOf(root, "messages"));
  const tools = itemsOf(memberOf(root, "tools"));
  const chatOnly =
    CHAT_ONLY_TOP_LEVEL.some(has) ||
    messages.some(
      (message) =>
        CHAT_ROLES.has(stringValue(memberOf(message, "role")) ?? "") ||
        memberOf(message, "tool_calls") !== undefined,
    ) ||
    tools.some((tool) => stringValue(memberOf(tool, "type")) === "function");
  if (
    OPENROUTER_TOP_LEVEL.some(has) ||
    messages.some((message) => memberOf(message, "reasoning_details") !== undefined)
  ) {
    return "openrouter";
  }
  if (chatOnly) return "openai-chat";
  const anthropic =
    ANTHROPIC_TOP_LEVEL.some(has) ||
    hasCacheControl(root) ||
    tools.some((tool) => memberOf(tool, "input_schema") !== undefined) ||
    messages.some((message) => itemsOf(memberOf(message, "content")).some(isAnthropicBlock)) ||
    (has("max_tokens") &&
      messages.length > 0 &&
      messages.every((message) => memberOf(message, "content")?.kind === "array"));
  return anthropic ? "anthropic" : "openai-chat";
}
