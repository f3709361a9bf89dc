import { Buffer } from "node:buffer";
import { utf8Encode } from "../core/bytes.js";
import { VerbatimError } from "../core/errors.js";
import type { ProjectedMessages } from "./trajectory.js";

/**
 * Control-plane paging (SPEC B12): a page of selected messages must fit a size limit counted in
 * UTF-8 bytes of its compact JSON (`JSON.stringify`). When it does not, content is cut, the
 * longest first: every content string longer than a common level is cut down to that level
 * (the highest level that frees enough bytes), at a code point boundary, and the page's
 * `metadata.content_truncated` becomes true (messages are not marked one by one: a mark per
 * message would cost bytes and cut more content). Content is message text (a string or
 * text parts), tool results, and tool-call arguments; roles, names, ids and images are never
 * cut, so a page that cannot fit even with every content string empty is refused.
 */
export function pageByteLength(page: unknown): number {
  return utf8Encode(JSON.stringify(page)).length;
}

type Json = Record<string, unknown>;

/** A content string's place in a copy: the object holding it and its key (no closures). */
interface Slot {
  readonly holder: Json;
  readonly key: string;
}

const slotValue = (slot: Slot): unknown => slot.holder[slot.key];
const setSlot = (slot: Slot, value: string): void => {
  slot.holder[slot.key] = value;
};

/** A code unit that JSON escapes or that takes more than one byte in UTF-8. */
const ESCAPED_OR_WIDE = /["\\\u0000-\u001f\u0080-\uffff]/;

/** Bytes of a string inside JSON (quotes excluded), as `JSON.stringify` writes it in UTF-8. */
function escapedLength(text: string): number {
  return ESCAPED_OR_WIDE.test(text) ? Buffer.byteLength(JSON.stringify(text)) - 2 : text.length;
}

/** A copy of JSON data by structure: new arrays and plain objects, the same strings. */
function copyJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyJson);
  if (typeof value !== "object" || value === null) return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Json = {};
  // Keys, not entries: an array per property was most of what a page's copy allocated.
  for (const key of Object.keys(value)) {
    // Defined, not assigned: a "__proto__" key of parsed JSON is an ordinary property.
    Object.defineProperty(copy, key, {
      value: copyJson((value as Json)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/** Bytes a code point takes inside a JSON string literal (as JSON.stringify writes it). */
function escapedCost(codePoint: number): number {
  if (codePoint === 0x22 || codePoint === 0x5c) return 2;
  if (codePoint < 0x20) {
    return codePoint === 8 ||
      codePoint === 9 ||
      codePoint === 10 ||
      codePoint === 12 ||
      codePoint === 13
      ? 2
      : 6;
  }
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return 6;
  return codePoint < 0x10000 ? 3 : 4;
}

/** The longest prefix at a code point boundary whose escaped length is ≤ budget, and that length. */
function cutTo(text: string, budget: number): { readonly text: string; readonly length: number } {
  let used = 0;
  let end = 0;
  for (const char of text) {
    const cost = escapedCost(char.codePointAt(0) ?? 0);
    if (used + cost > budget) break;
    used += cost;
    end += char.length;
  }
  return { text: text.slice(0, end), length: used };
}

/** The highest level L with Σ max(0, length − L) ≥ excess. */
function levelFor(lengths: readonly number[], excess: number): number {
  const sorted = [...lengths].sort((a, b) => b - a);
  let freed = 0;
  for (let count = 1; count <= sorted.length; count++) {
    const top = sorted[count - 1] ?? 0;
    const below = sorted[count] ?? 0;
    // Lowering the `count` longest from `top` to `below` frees count × (top − below).
    if (freed + count * (top - below) >= excess) {
      return top - Math.ceil((excess - freed) / count);
    }
    freed += count * (top - below);
  }
  return 0;
}

/** Content slots of a message: its text (a string or text parts) and its tool-call arguments. */
function slotsOf(message: Json, slots: Slot[]): void {
  const content = message["content"];
  if (typeof content === "string") {
    slots.push({ holder: message, key: "content" });
  } else if (Array.isArray(content)) {
    for (const part of content as Json[]) {
      if (part["type"] === "text") slots.push({ holder: part, key: "text" });
    }
  }
  const calls = message["tool_calls"];
  if (Array.isArray(calls)) {
    for (const call of calls as Json[]) {
      slots.push({ holder: call["function"] as Json, key: "arguments" });
    }
  }
}

/**
 * A message's copy, its content slots (in the copy) with their escaped lengths, and its JSON
 * size: the copy written with its content strings empty, plus their lengths (the long strings
 * are never written out to be measured). A slot that holds no string is never cut.
 */
function measure(message: Json, slots: Slot[], lengths: number[]): { copy: Json; size: number } {
  const copy = copyJson(message) as Json;
  const start = slots.length;
  slotsOf(copy, slots);
  const strings: (string | undefined)[] = [];
  let size = 0;
  for (let slot = start; slot < slots.length; slot++) {
    const value = slotValue(slots[slot] as Slot);
    const text = typeof value === "string" ? value : undefined;
    const length = text === undefined ? 0 : escapedLength(text);
    strings.push(text);
    lengths.push(length);
    size += length;
    if (text !== undefined) setSlot(slots[slot] as Slot, "");
  }
  size += Buffer.byteLength(JSON.stringify(copy));
  strings.forEach((text, offset) => {
    if (text !== undefined) setSlot(slots[start + offset] as Slot, text);
  });
  return { copy, size };
}

/**
 * The steps of `fitPageToLimit`, for a caller that must not block (the console's server): a
 * generator that yields after each message it measures and each string it cuts, and returns
 * the page fitted into `limitBytes` (the page itself when it fits, otherwise a copy: the page
 * given is never changed). The cut is written once, here:
 * `fitPageToLimit` runs the steps at once, and the console's server runs them giving the event
 * loop a turn every few milliseconds, so that a large page never blocks it
 * (verbatim-llm-server, gateway/console/fit-page.ts; bench/server/console-event-loop.ts
 * measures the stall). The page's size is kept as a running sum, message by message, and
 * little is allocated beside the page (the young generation the garbage collector scavenges
 * stays small): the messages are copied by structure (their strings shared, not copied) and a
 * string's JSON size is counted without writing it when nothing in it needs escaping.
 * `limitBytes` is taken as given (`fitPageToLimit` checks it).
 */
export function* fitPageInSteps<P extends ProjectedMessages>(
  page: P,
  limitBytes: number,
): Generator<void, P, void> {
  const messages = page.messages as unknown as readonly Json[];
  // Copies of the messages, their slots and sizes.
  const copies: Json[] = [];
  const slots: Slot[] = [];
  const lengths: number[] = [];
  let sizes = 0;
  for (const message of messages) {
    const { copy, size } = measure(message, slots, lengths);
    copies.push(copy);
    sizes += size;
    yield;
  }
  const total = (metadata: unknown) =>
    Buffer.byteLength(JSON.stringify({ ...page, messages: [], metadata })) +
    Math.max(0, messages.length - 1) +
    sizes;
  if (total(page.metadata) <= limitBytes) return page;
  const metadata = { ...page.metadata, content_truncated: true };
  let size = total(metadata);
  for (;;) {
    if (size <= limitBytes) {
      return { ...page, messages: copies, metadata } as unknown as P;
    }
    const level = levelFor(lengths, size - limitBytes);
    const over = lengths.flatMap((length, index) => (length > level ? [index] : []));
    if (over.length === 0) {
      throw new VerbatimError(
        "trajectory_page_limit_too_small",
        `the page takes ${size} bytes with every content string empty; the limit is ${limitBytes}`,
        {
          where: "page limit",
          hint: `Raise the page limit to at least ${size} bytes, or select fewer messages`,
        },
      );
    }
    for (const index of over) {
      const slot = slots[index] as Slot;
      const cut = cutTo(slotValue(slot) as string, level);
      size -= (lengths[index] ?? 0) - cut.length;
      lengths[index] = cut.length;
      setSlot(slot, cut.text);
      yield;
    }
  }
}

export interface PageLimitOptions {
  /** The most UTF-8 bytes the page's compact JSON may take. */
  readonly limitBytes: number;
}

/**
 * Fits a page (messages and metadata, plus any other fields the page carries) into the limit.
 * Returns the page unchanged when it fits; otherwise a copy with content cut.
 */
export function fitPageToLimit<P extends ProjectedMessages>(page: P, options: PageLimitOptions): P {
  const limit = options.limitBytes;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new VerbatimError(
      "invalid_argument",
      `the page limit must be a whole number of bytes, got ${limit}`,
      {
        where: "limitBytes",
      },
    );
  }
  // What the steps find first, at the cost of one JSON text of the page instead of a copy.
  if (pageByteLength(page) <= limit) return page;
  const steps = fitPageInSteps(page, limit);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}
