// Issue 35 item 3 (cline): the Anthropic `messages` a Cline task would send next, from its
// api_conversation_history.json as the extension computes them, and from a rendered request,
// each brought to one form so that the two compare.
//
// From the file, as the extension does before sending:
// - Roo Code: the history from the last condensed summary on (getEffectiveApiHistory), without
//   messages its sliding-window truncation hides and tool results whose call was condensed away;
// - only `role` and `content`: `ts`, `modelInfo`, `metrics`, `id`, Roo Code's condense and
//   truncation marks, and the blocks' `call_id`, `reasoning_details`, `summary` and a
//   non-thinking block's `signature` are removed (Cline's convertClineStorageToAnthropicMessage);
// - Cline's ensureToolResultsFollowToolUse: a tool_use the next user message does not answer
//   gets `{"type":"tool_result","content":"result missing"}` at the start of that message.
// Differences of form only (the same request to the API): a string content is one text block;
// a tool_result's text parts are one string; consecutive messages of one role are one message;
// the renderer's cache_control breakpoint is not compared.
// Not in format 1, so not compared: thinking and redacted_thinking blocks (provider-signed
// material, A23); when the task stopped inside a tool call, the package also holds the result
// Cline sends for it on resuming ("result missing").

export type WireBlock = Record<string, unknown> & { type: string };
export interface WireMessage {
  role: string;
  content: string | WireBlock[];
  [key: string]: unknown;
}

const MISSING = "result missing";

function blocksOf(content: string | WireBlock[]): WireBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as WireBlock[])
    .flatMap((part) => (typeof part.text === "string" ? [part.text] : []))
    .join("\n\n");
}

function anthropicBlock(block: WireBlock): WireBlock | undefined {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", source: block.source };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.tool_use_id,
        content: toolResultText(block.content),
        ...(block.is_error === true ? { is_error: true } : {}),
      };
    default:
      return undefined;
  }
}

/** Roo Code's effective history: from the last summary on, without hidden messages. */
function effective(messages: WireMessage[]): WireMessage[] {
  let from = 0;
  messages.forEach((message, index) => {
    if (message.isSummary === true) from = index;
  });
  const markers = new Set(
    messages.filter((m) => m.isTruncationMarker === true).map((m) => String(m.truncationId)),
  );
  const kept = messages
    .slice(from)
    .filter((m) => typeof m.truncationParent !== "string" || !markers.has(m.truncationParent));
  if (from === 0) return kept;
  const calls = new Set(
    kept.flatMap((m) => blocksOf(m.content).flatMap((b) => (b.type === "tool_use" ? [b.id] : []))),
  );
  return kept.map((m) => ({
    ...m,
    content: blocksOf(m.content).filter(
      (b) => b.type !== "tool_result" || calls.has(b.tool_use_id),
    ),
  }));
}

/** Cline's ensureToolResultsFollowToolUse (src/core/context/context-management/ContextManager.ts). */
function answerEveryCall(messages: WireMessage[]): WireMessage[] {
  return messages.map((message, index) => {
    const previous = messages[index - 1];
    if (message.role !== "user" || previous?.role !== "assistant") return message;
    const ids = blocksOf(previous.content).flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
    const blocks = blocksOf(message.content);
    const results = new Map(
      blocks.filter((b) => b.type === "tool_result").map((b) => [b.tool_use_id, b]),
    );
    const first = ids.map(
      (id) => results.get(id) ?? { type: "tool_result", tool_use_id: id, content: MISSING },
    );
    return { ...message, content: [...first, ...blocks.filter((b) => !first.includes(b))] };
  });
}

function merged(messages: { role: string; content: WireBlock[] }[]) {
  const out: { role: string; content: WireBlock[] }[] = [];
  for (const message of messages) {
    if (message.content.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === message.role) last.content.push(...message.content);
    else out.push({ role: message.role, content: [...message.content] });
  }
  return out;
}

/** The messages of a source file (`source`) or of a rendered request (`rendered`), compared. */
export function anthropicMessagesOf(messages: WireMessage[], from: "source" | "rendered") {
  const list = from === "source" ? answerEveryCall(effective(messages)) : messages;
  const out = merged(
    list.map((message) => ({
      role: message.role,
      content: blocksOf(message.content).flatMap((block) => anthropicBlock(block) ?? []),
    })),
  );
  const last = out.at(-1);
  if (
    from === "rendered" &&
    last?.role === "user" &&
    last.content.every((b) => b.type === "tool_result" && b.content === MISSING)
  ) {
    out.pop();
  }
  return out;
}
