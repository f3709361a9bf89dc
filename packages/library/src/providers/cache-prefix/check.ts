/**
 * The cache-prefix checker (A27): two consecutive request bodies of one provider pass when
 * every top-level field but the message list is the same and the second's messages are the
 * first's plus appended ones, compared message by message and byte for byte (key order,
 * escapes and spacing included), ignoring only the `cache_control` key. Otherwise it names the
 * first difference: the message index and the JSON path inside it.
 */
import { VerbatimError } from "../../core/errors.js";
import type { ProviderId } from "../types.js";
import { detectProvider } from "./detect.js";
import { memberOf, parseJsonTree, type JsonNode } from "./json-tree.js";
import { stripSignedMaterial } from "./signed.js";

export interface CachePrefixDifference {
  /** Index in the message list; absent when a top-level field differs. */
  readonly messageIndex?: number;
  /** JSON path from the body's root, e.g. `$.messages[3].content[1].input`. */
  readonly path: string;
  readonly reason: string;
}

export type CachePrefixResult =
  | { readonly ok: true; readonly provider: ProviderId; readonly appended: number }
  | {
      readonly ok: false;
      readonly provider: ProviderId;
      readonly difference: CachePrefixDifference;
    };

export interface CachePrefixOptions {
  /**
   * Leave out the running turn's signed material (thinking blocks, reasoning items, thought
   * signatures, reasoning_details) from both bodies before comparing: for the first request
   * of a turn, which extends the previous request minus that material.
   */
  readonly ignoreSignedMaterial?: boolean;
}

const LIST_KEYS = ["messages", "contents", "input"] as const;

class Found {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {}
}

function describe(node: JsonNode | undefined): string {
  if (node === undefined) return "nothing";
  const raw = node.raw;
  return raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
}

/** Throws Found at the first difference between two nodes. */
function compare(before: JsonNode, after: JsonNode, path: string): void {
  const structural = (node: JsonNode) => node.kind !== "scalar" && node.structural;
  if (!structural(before) && !structural(after) && before.raw === after.raw) return;
  if (before.kind !== after.kind)
    throw new Found(path, `${describe(before)} became ${describe(after)}`);
  if (before.kind === "scalar") {
    throw new Found(path, `${describe(before)} became ${describe(after)}`);
  }
  if (before.kind === "array" && after.kind === "array") {
    const count = Math.min(before.items.length, after.items.length);
    for (let index = 0; index < count; index++) {
      compare(before.items[index] as JsonNode, after.items[index] as JsonNode, `${path}[${index}]`);
    }
    if (before.items.length !== after.items.length) {
      const what = before.items.length > after.items.length ? "removed" : "added";
      throw new Found(
        `${path}[${count}]`,
        `an element was ${what} (${before.items.length} before, ${after.items.length} after)`,
      );
    }
    if (!structural(before) && !structural(after)) throw new Found(path, "the spacing differs");
    return;
  }
  if (before.kind === "object" && after.kind === "object") {
    const left = before.members.filter((member) => member.key !== "cache_control");
    const right = after.members.filter((member) => member.key !== "cache_control");
    const count = Math.min(left.length, right.length);
    for (let index = 0; index < count; index++) {
      const a = left[index] as { key: string; value: JsonNode };
      const b = right[index] as { key: string; value: JsonNode };
      if (a.key !== b.key) {
        throw new Found(
          path,
          `key ${index + 1} is "${b.key}" where it was "${a.key}" (keys reordered, added or removed)`,
        );
      }
      compare(a.value, b.value, `${path}${keyPath(a.key)}`);
    }
    if (left.length !== right.length) {
      const extra = left.length > right.length ? left[count] : right[count];
      const what = left.length > right.length ? "removed" : "added";
      throw new Found(`${path}${keyPath(extra?.key ?? "")}`, `the key was ${what}`);
    }
    if (!structural(before) && !structural(after)) throw new Found(path, "the spacing differs");
  }
}

function keyPath(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

export function checkCachePrefix(
  beforeBody: string,
  afterBody: string,
  options: CachePrefixOptions = {},
): CachePrefixResult {
  let before = parseJsonTree(beforeBody, "the first body");
  let after = parseJsonTree(afterBody, "the second body");
  if (before.kind !== "object" || after.kind !== "object") {
    throw new VerbatimError("cache_prefix_unreadable", "a request body must be a JSON object");
  }
  const provider = detectProvider(before);
  const listKey = LIST_KEYS.find((key) => memberOf(before, key) !== undefined);
  if (listKey === undefined) {
    throw new VerbatimError(
      "cache_prefix_unreadable",
      "the first body has no messages, contents or input list",
      {
        hint: "Pass request bodies of Anthropic, OpenAI, Gemini or OpenRouter",
      },
    );
  }
  if (options.ignoreSignedMaterial === true) {
    before = stripSignedMaterial(before, listKey);
    after = stripSignedMaterial(after, listKey);
  }
  try {
    const beforeTop = before.kind === "object" ? before.members : [];
    const afterTop = after.kind === "object" ? after.members : [];
    const strip = (members: typeof beforeTop) =>
      members.map((member) =>
        member.key === listKey ? { key: member.key, value: PLACEHOLDER } : member,
      );
    compare(
      { kind: "object", members: strip(beforeTop), raw: "", structural: true },
      { kind: "object", members: strip(afterTop), raw: "", structural: true },
      "$",
    );
  } catch (error) {
    if (error instanceof Found)
      return { ok: false, provider, difference: { path: error.path, reason: error.reason } };
    throw error;
  }
  const beforeList = memberOf(before, listKey);
  const afterList = memberOf(after, listKey);
  if (beforeList?.kind !== "array" || afterList?.kind !== "array") {
    return {
      ok: false,
      provider,
      difference: { path: `$.${listKey}`, reason: `${listKey} is not a list in both bodies` },
    };
  }
  for (let index = 0; index < beforeList.items.length; index++) {
    const path = `$.${listKey}[${index}]`;
    const next = afterList.items[index];
    if (next === undefined) {
      return {
        ok: false,
        provider,
        difference: {
          messageIndex: index,
          path,
          reason: `the message was removed (${beforeList.items.length} before, ${afterList.items.length} after)`,
        },
      };
    }
    try {
      compare(beforeList.items[index] as JsonNode, next, path);
    } catch (error) {
      if (error instanceof Found) {
        return {
          ok: false,
          provider,
          difference: { messageIndex: index, path: error.path, reason: error.reason },
        };
      }
      throw error;
    }
  }
  return { ok: true, provider, appended: afterList.items.length - beforeList.items.length };
}

const PLACEHOLDER: JsonNode = { kind: "scalar", raw: "null" };
