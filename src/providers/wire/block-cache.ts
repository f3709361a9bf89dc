/**
 * A cache of rendered blocks. History blocks are immutable values, so the JSON a renderer
 * writes for a block is a function of the block and the wire shape: it is kept per block
 * object (WeakMap, so it goes with the history) and spliced in as raw JSON at the next
 * request, which makes rendering the next request of a long conversation cheap. Warnings a
 * block raised are raised again, at the block's current place, on every render.
 */
import type { Block } from "../../history/message.js";
import type { RenderWarning } from "../types.js";
import { whereOf, type PlacedBlock } from "./history-turns.js";
import { RawJson, writeJson, type WireValue } from "./json-writer.js";

interface Entry {
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
  if (hit !== undefined) {
    for (const warning of hit.warnings) warnings.push({ ...warning, where });
    return hit.raw;
  }
  const raised: RenderWarning[] = [];
  const raw = new RawJson(writeJson(build(raised)));
  cache.set(placed.block, {
    raw,
    warnings: raised.map(({ code, message }) => ({ code, message })),
  });
  warnings.push(...raised);
  return raw;
}
