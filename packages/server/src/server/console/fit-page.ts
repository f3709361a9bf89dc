import { VerbatimError } from "verbatim-llm/core";
import type { ProjectedMessages } from "verbatim-llm/trajectory";
import { inSlices } from "./slices.js";

/**
 * The page size limit of the console routes (SPEC B12, docs/server.md "Page size") without
 * blocking the event loop: the same cut as `fitPageToLimit` of src/trajectory (the longest
 * content strings cut to one common level, at code point boundaries; the page marked
 * `content_truncated`), byte for byte, but worked out message by message with the page's size
 * kept as a running sum, giving the event loop a turn every few milliseconds. A page of
 * 1,000 messages of 8 KiB each took one 200–300 ms block; bench/server/console-event-loop.ts
 * measures the stall.
 */
type Json = Record<string, unknown>;

interface Slot {
  readonly message: number;
  get(): string;
  set(value: string): void;
}

/** Bytes of a string inside JSON (quotes excluded), as `JSON.stringify` writes it in UTF-8. */
function escapedLength(text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2;
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

function levelFor(lengths: readonly number[], excess: number): number {
  const sorted = [...lengths].sort((a, b) => b - a);
  let freed = 0;
  for (let count = 1; count <= sorted.length; count++) {
    const top = sorted[count - 1] ?? 0;
    const below = sorted[count] ?? 0;
    if (freed + count * (top - below) >= excess) {
      return top - Math.ceil((excess - freed) / count);
    }
    freed += count * (top - below);
  }
  return 0;
}

function slotsOf(message: Json, index: number, slots: Slot[]): void {
  const content = message["content"];
  if (typeof content === "string") {
    slots.push({
      message: index,
      get: () => message["content"] as string,
      set: (value) => (message["content"] = value),
    });
  } else if (Array.isArray(content)) {
    for (const part of content as Json[]) {
      if (part["type"] === "text") {
        slots.push({
          message: index,
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
        message: index,
        get: () => fn["arguments"] as string,
        set: (value) => (fn["arguments"] = value),
      });
    }
  }
}

export async function fitPageYielding<P extends ProjectedMessages>(
  page: P,
  limitBytes: number,
): Promise<P> {
  const messages = page.messages as unknown as readonly Json[];
  const sizes: number[] = [];
  await inSlices(messages.length, (index) => {
    sizes.push(Buffer.byteLength(JSON.stringify(messages[index])));
  });
  const skeleton = (metadata: unknown) =>
    Buffer.byteLength(JSON.stringify({ ...page, messages: [], metadata }));
  const between = Math.max(0, messages.length - 1);
  const total = (metadata: unknown) =>
    skeleton(metadata) + between + sizes.reduce((sum, size) => sum + size, 0);
  if (total(page.metadata) <= limitBytes) return page;
  const metadata = { ...page.metadata, content_truncated: true };
  // Copies of the messages, made as they are cut (the page given is never changed).
  const copies: Json[] = [...messages];
  const copied = new Set<number>();
  const slots: Slot[] = [];
  const lengths: number[] = [];
  const firstSlot: number[] = [];
  await inSlices(messages.length, (index) => {
    firstSlot.push(slots.length);
    const start = slots.length;
    slotsOf(messages[index] as Json, index, slots);
    for (let slot = start; slot < slots.length; slot++) {
      lengths.push(escapedLength(slots[slot]?.get() ?? ""));
    }
  });
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
    // Copy a message before its first cut (the page given is never changed); its slots then
    // point into the copy. Copies and cuts both run in slices.
    const copyMessage = (message: number) => {
      const copy = JSON.parse(JSON.stringify(messages[message])) as Json;
      copies[message] = copy;
      copied.add(message);
      const fresh: Slot[] = [];
      slotsOf(copy, message, fresh);
      const first = firstSlot[message] ?? 0;
      fresh.forEach((one, offset) => (slots[first + offset] = one));
    };
    await inSlices(over.length, (position) => {
      const index = over[position] ?? 0;
      const original = slots[index];
      if (original === undefined) return;
      if (!copied.has(original.message)) copyMessage(original.message);
      const slot = slots[index] ?? original;
      const cut = cutTo(slot.get(), level);
      const length = escapedLength(cut);
      size -= (lengths[index] ?? 0) - length;
      lengths[index] = length;
      slot.set(cut);
    });
  }
}
