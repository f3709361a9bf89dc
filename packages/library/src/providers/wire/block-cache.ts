/**
 * A cache of rendered blocks. The JSON a renderer writes for a block is a function of the
 * block's fields and the wire shape: it is kept per block object (WeakMap, so it goes with the
 * history) beside a copy of the fields it was written from, and spliced in as raw JSON at the
 * next request while the block still holds those fields, which makes rendering the next request
 * of a long conversation cheap. A block changed in place since (a caller's mutation) no longer
 * matches its copy and is rendered again: history handed to the library cannot go stale.
 * Blocks are flat (strings and a boolean), so the check is a few `===` per block. Warnings a
 * block raised are raised again, at the block's current place, on every render.
 */
import type { Block } from "../../history/message.js";
import type { RenderWarning } from "../types.js";
import { whereOf, type PlacedBlock } from "./history-turns.js";
import { RawJson, writeJson, type WireValue } from "./json-writer.js";

interface Entry {
  /** A copy of the block's fields when it was rendered. */
  readonly fields: Block;
  readonly raw: RawJson;
  readonly warnings: readonly Omit<RenderWarning, "where">[];
}

const caches = new Map<string, WeakMap<Block, Entry>>();

/** The block rendered by `build` for wire shape `shape`, from the cache when it was before. */
export function cachedBlock(
  shape: string,
  placed: PlacedBlock,
  warnings: RenderWarning[],
  build: (warnings: RenderWarning[]) => WireValue,
): RawJson {
  let cache = caches.get(shape);
  if (cache === undefined) {
    cache = new WeakMap();
    caches.set(shape, cache);
  }
  const where = whereOf(placed.message, placed.index);
  const hit = cache.get(placed.block);
  if (hit !== undefined && sameFields(hit.fields, placed.block)) {
    for (const warning of hit.warnings) warnings.push({ ...warning, where });
    return hit.raw;
  }
  const raised: RenderWarning[] = [];
  const raw = new RawJson(writeJson(build(raised)));
  cache.set(placed.block, {
    fields: { ...placed.block },
    raw,
    warnings: raised.map(({ code, message }) => ({ code, message })),
  });
  warnings.push(...raised);
  return raw;
}

/**
 * True when `block` holds the values `copy` was taken with, in every field a renderer reads
 * (both variants of tool calls and results, so a changed variant counts as a change).
 */
function sameFields(copy: Block, block: Block): boolean {
  if (copy.type !== block.type) return false;
  const before = copy as Partial<Record<BlockField, unknown>>;
  const now = block as Partial<Record<BlockField, unknown>>;
  switch (block.type) {
    case "text":
      return before.text === now.text;
    case "image":
      return before.sha256 === now.sha256 && before.mimeType === now.mimeType;
    case "imageOmitted":
      return before.mimeType === now.mimeType;
    case "toolCall":
      return (
        before.id === now.id &&
        before.name === now.name &&
        before.arguments === now.arguments &&
        before.argumentsBase64 === now.argumentsBase64
      );
    case "toolResult":
      return (
        before.callID === now.callID &&
        before.toolName === now.toolName &&
        before.isError === now.isError &&
        before.content === now.content &&
        before.contentBase64 === now.contentBase64
      );
    default: {
      const unreachable: never = block;
      return unreachable;
    }
  }
}

/** Every field name of every block type. */
type BlockField =
  | "text"
  | "sha256"
  | "mimeType"
  | "id"
  | "name"
  | "arguments"
  | "argumentsBase64"
  | "callID"
  | "toolName"
  | "isError"
  | "content"
  | "contentBase64";
