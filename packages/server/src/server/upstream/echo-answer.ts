/**
 * The answer of the demo upstream (`verbatim serve --upstream echo`, docs/cli.md): a fixed rule
 * over an Anthropic Messages request body, so that the API and the console work offline, with
 * streaming and tool calls, and a test can predict every answer.
 *
 * 1. The last message carries tool results: the answer is one text line per result,
 *    `<tool name> returned: <result text>` (`<tool name> failed: …` for an error result).
 * 2. Otherwise, when the request gives tools and the last message's text names one of them (the
 *    exact name, as a whole word): the answer is one call to the tool named first in the text.
 *    Its arguments are the text from the first `{` to the last `}` when that is a JSON object,
 *    else `{}`.
 * 3. Otherwise the answer is the last message's text, unchanged (its text blocks joined by a
 *    newline), or `(echo: the last message has no text)`.
 */
export type EchoAnswer =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "toolCall"; readonly name: string; readonly input: Record<string, unknown> };

/** Why a body cannot be answered; the echo replies 400 with it. */
export class EchoRequestError extends Error {}

export const NO_TEXT_ANSWER = "(echo: the last message has no text)";

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function blocksOf(content: unknown): JsonObject[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter(isObject);
}

function textOf(content: unknown): string {
  return blocksOf(content)
    .filter((block) => block["type"] === "text" && typeof block["text"] === "string")
    .map((block) => block["text"] as string)
    .join("\n");
}

/** The tool names of the request's `tools`, in their order. */
function toolNames(body: JsonObject): string[] {
  const tools = body["tools"];
  if (!Array.isArray(tools)) return [];
  return tools
    .filter(isObject)
    .map((tool) => tool["name"])
    .filter((name): name is string => typeof name === "string" && name !== "");
}

function escapeForPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Where `name` first appears in `text` as a whole word, or -1. */
function wordPosition(text: string, name: string): number {
  const pattern = new RegExp(`(^|[^A-Za-z0-9_-])${escapeForPattern(name)}(?![A-Za-z0-9_-])`);
  const match = pattern.exec(text);
  return match === null ? -1 : match.index + (match[1] ?? "").length;
}

function argumentsOf(text: string): Record<string, unknown> {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end < start) return {};
  try {
    const parsed: unknown = JSON.parse(text.slice(start, end + 1));
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** The names of the tool calls of the assistant messages, by call id. */
function callNames(messages: readonly JsonObject[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const block of blocksOf(message["content"])) {
      if (block["type"] === "tool_use" && typeof block["id"] === "string") {
        names.set(block["id"], typeof block["name"] === "string" ? block["name"] : "the tool");
      }
    }
  }
  return names;
}

/** Applies the rule above to a parsed request body. */
export function echoAnswer(body: unknown): EchoAnswer {
  if (!isObject(body)) throw new EchoRequestError("the body is not a JSON object");
  const messages = body["messages"];
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isObject)) {
    throw new EchoRequestError("messages: expected a non-empty array of message objects");
  }
  const last = messages[messages.length - 1] as JsonObject;
  const results = blocksOf(last["content"]).filter((block) => block["type"] === "tool_result");
  if (results.length > 0) {
    const names = callNames(messages);
    const lines = results.map((result) => {
      const id = typeof result["tool_use_id"] === "string" ? result["tool_use_id"] : "";
      const verb = result["is_error"] === true ? "failed" : "returned";
      return `${names.get(id) ?? "the tool"} ${verb}: ${textOf(result["content"])}`;
    });
    return { kind: "text", text: lines.join("\n") };
  }
  const text = textOf(last["content"]);
  const named = toolNames(body)
    .map((name) => ({ name, position: wordPosition(text, name) }))
    .filter((candidate) => candidate.position >= 0)
    .sort((left, right) => left.position - right.position)[0];
  if (named !== undefined) {
    return { kind: "toolCall", name: named.name, input: argumentsOf(text) };
  }
  return { kind: "text", text: text === "" ? NO_TEXT_ANSWER : text };
}
