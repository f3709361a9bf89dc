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

interface Slot {
  get(): string;
  set(value: string): void;
}

type Json = Record<string, unknown>;

function slotsOf(messages: Json[]): Slot[] {
  const slots: Slot[] = [];
  messages.forEach((message, index) => {
    const content = message["content"];
    if (typeof content === "string") {
      slots.push({
        get: () => message["content"] as string,
        set: (value) => (message["content"] = value),
      });
    } else if (Array.isArray(content)) {
      for (const part of content as Json[]) {
        if (part["type"] === "text") {
          slots.push({
            get: () => part["text"] as string,
            set: (value) => (part["text"] = value),
          });
        }
      }
    }
    const calls = message["tool_calls"];
    if (Array.isArray(calls)) {
      for (const call of calls as Json[]) {
        const fn = call["function"] as Json;
        slots.push({
          get: () => fn["arguments"] as string,
          set: (value) => (fn["arguments"] = value),
        });
      }
    }
  });
  return slots;
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

function escapedLength(text: string): number {
  let total = 0;
  for (const char of text) total += escapedCost(char.codePointAt(0) ?? 0);
  return total;
}

/** The longest prefix, ending at a code point boundary, whose escaped length is ≤ budget. */
function cutTo(text: string, budget: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    const cost = escapedCost(char.codePointAt(0) ?? 0);
    if (used + cost > budget) break;
    used += cost;
    end += char.length;
  }
  return text.slice(0, end);
}

/** The highest level L with Σ max(0, length − L) ≥ excess (lengths sorted descending). */
function levelFor(lengths: number[], excess: number): number {
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
  if (pageByteLength(page) <= limit) return page;
  const copy = JSON.parse(JSON.stringify(page)) as Json & { messages: Json[]; metadata: Json };
  copy.metadata["content_truncated"] = true;
  const slots = slotsOf(copy.messages);
  for (;;) {
    const size = pageByteLength(copy);
    if (size <= limit) return copy as unknown as P;
    const lengths = slots.map((slot) => escapedLength(slot.get()));
    const level = levelFor(lengths, size - limit);
    let changed = false;
    slots.forEach((slot, index) => {
      if ((lengths[index] ?? 0) <= level) return;
      slot.set(cutTo(slot.get(), level));
      changed = true;
    });
    if (!changed) {
      throw new VerbatimError(
        "trajectory_page_limit_too_small",
        `the page takes ${size} bytes with every content string empty; the limit is ${limit}`,
        {
          where: "page limit",
          hint: `Raise the page limit to at least ${size} bytes, or select fewer messages`,
        },
      );
    }
  }
}
