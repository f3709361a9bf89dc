/**
 * Removes the running turn's signed material from a request body's tree (for comparing the
 * first request of a turn with the last request of the previous one): Anthropic thinking,
 * redacted thinking and server-tool blocks; OpenAI Responses reasoning items; Gemini thought
 * parts, signed empty text parts and `thoughtSignature` keys; OpenRouter `reasoning_details`.
 */
import { memberOf, stringValue, type JsonNode } from "./json-tree.js";

const SIGNED_BLOCK_TYPES = new Set([
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "web_search_tool_result",
  "reasoning",
]);

type ObjectNode = Extract<JsonNode, { kind: "object" }>;
type ArrayNode = Extract<JsonNode, { kind: "array" }>;

function isSignedItem(node: JsonNode): boolean {
  if (node.kind !== "object") return false;
  const type = stringValue(memberOf(node, "type"));
  if (type !== undefined && SIGNED_BLOCK_TYPES.has(type)) return true;
  if (memberOf(node, "thought")?.raw === "true") return true;
  const text = memberOf(node, "text");
  return (
    memberOf(node, "thoughtSignature") !== undefined &&
    text?.raw === '""' &&
    node.members.length === 2
  );
}

function withoutKeys(node: ObjectNode, keys: readonly string[]): ObjectNode {
  if (!node.members.some((member) => keys.includes(member.key))) return node;
  return {
    ...node,
    members: node.members.filter((member) => !keys.includes(member.key)),
    structural: true,
  };
}

function filterArray(node: ArrayNode, map: (item: JsonNode) => JsonNode | undefined): ArrayNode {
  const items: JsonNode[] = [];
  let changed = false;
  for (const item of node.items) {
    const mapped = map(item);
    if (mapped !== item) changed = true;
    if (mapped !== undefined) items.push(mapped);
  }
  return changed ? { ...node, items, structural: true } : node;
}

function stripMessage(message: JsonNode): JsonNode | undefined {
  if (message.kind !== "object") return message;
  if (isSignedItem(message)) return undefined;
  let result = withoutKeys(message, ["reasoning_details"]);
  result = {
    ...result,
    members: result.members.map((member) => {
      if ((member.key === "content" || member.key === "parts") && member.value.kind === "array") {
        const list = filterArray(member.value, (item) => {
          if (isSignedItem(item)) return undefined;
          return item.kind === "object" ? withoutKeys(item, ["thoughtSignature"]) : item;
        });
        return list === member.value ? member : { key: member.key, value: list };
      }
      return member;
    }),
  };
  const changed =
    result.members.some((member, index) => member !== message.members[index]) ||
    result.members.length !== message.members.length;
  return changed ? { ...result, structural: true } : message;
}

export function stripSignedMaterial(root: JsonNode, listKey: string): JsonNode {
  if (root.kind !== "object") return root;
  return {
    ...root,
    structural: true,
    members: root.members.map((member) =>
      member.key === listKey && member.value.kind === "array"
        ? { key: member.key, value: filterArray(member.value, stripMessage) }
        : member,
    ),
  };
}
