/**
 * An order-keeping JSON tree for the cache-prefix checker: every node keeps its source span,
 * so two values can be compared byte for byte (key order, escapes, spacing) wherever no
 * ignored key (`cache_control`) sits inside them.
 */
import { VerbatimError } from "../../core/errors.js";
import { MAX_JSON_DEPTH } from "../../core/json-depth.js";

export type JsonNode =
  | { readonly kind: "scalar"; readonly raw: string }
  | { readonly kind: "array"; readonly items: JsonNode[]; raw: string; structural: boolean }
  | {
      readonly kind: "object";
      readonly members: { readonly key: string; readonly value: JsonNode }[];
      raw: string;
      /** True when the raw text cannot be compared as is (an ignored key inside, or edited). */
      structural: boolean;
    };

const IGNORED_KEY = "cache_control";
const SCALAR = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

export function parseJsonTree(text: string, what: string): JsonNode {
  let index = 0;
  const fail = (message: string): never => {
    throw new VerbatimError(
      "cache_prefix_unreadable",
      `${what} is not valid JSON: ${message} at offset ${index}`,
      {
        where: what,
      },
    );
  };
  const space = () => {
    for (;;) {
      const code = text.charCodeAt(index);
      if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) index++;
      else return;
    }
  };
  const value = (depth: number): JsonNode => {
    if (depth > MAX_JSON_DEPTH) fail("nesting too deep");
    space();
    const start = index;
    const code = text.charCodeAt(index);
    if (code === 0x7b) {
      index++;
      const members: { key: string; value: JsonNode }[] = [];
      let structural = false;
      space();
      if (text.charCodeAt(index) === 0x7d) index++;
      else {
        for (;;) {
          space();
          SCALAR.lastIndex = index;
          const match = SCALAR.exec(text);
          if (match === null || !match[0].startsWith('"')) fail("expected a key");
          const key = JSON.parse((match as RegExpExecArray)[0]) as string;
          index = SCALAR.lastIndex;
          space();
          if (text.charCodeAt(index) !== 0x3a) fail("expected ':'");
          index++;
          const member = value(depth + 1);
          if (key === IGNORED_KEY) structural = true;
          else if (member.kind !== "scalar" && member.structural) structural = true;
          members.push({ key, value: member });
          space();
          const next = text.charCodeAt(index++);
          if (next === 0x7d) break;
          if (next !== 0x2c) fail("expected ',' or '}'");
        }
      }
      return { kind: "object", members, raw: text.slice(start, index), structural };
    }
    if (code === 0x5b) {
      index++;
      const items: JsonNode[] = [];
      let structural = false;
      space();
      if (text.charCodeAt(index) === 0x5d) index++;
      else {
        for (;;) {
          const item = value(depth + 1);
          if (item.kind !== "scalar" && item.structural) structural = true;
          items.push(item);
          space();
          const next = text.charCodeAt(index++);
          if (next === 0x5d) break;
          if (next !== 0x2c) fail("expected ',' or ']'");
        }
      }
      return { kind: "array", items, raw: text.slice(start, index), structural };
    }
    SCALAR.lastIndex = index;
    const match = SCALAR.exec(text);
    if (match === null) return fail("unexpected character");
    index = SCALAR.lastIndex;
    return { kind: "scalar", raw: match[0] };
  };
  const root = value(0);
  space();
  if (index !== text.length) fail("unexpected text after the value");
  return root;
}

export function memberOf(node: JsonNode | undefined, key: string): JsonNode | undefined {
  if (node === undefined || node.kind !== "object") return undefined;
  return node.members.find((member) => member.key === key)?.value;
}

/** The string value of a scalar node, if it is a string. */
export function stringValue(node: JsonNode | undefined): string | undefined {
  if (node === undefined || node.kind !== "scalar" || !node.raw.startsWith('"')) return undefined;
  return JSON.parse(node.raw) as string;
}
