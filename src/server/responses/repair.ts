import type { Block } from "../../history/message.js";

/**
 * What an upstream sends that the store cannot keep as it is, made storable (docs/server.md,
 * "Response lifecycle"): lone surrogates become U+FFFD, texts over a length limit are cut at a
 * code point boundary (never between the two halves of a pair).
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text with each lone surrogate replaced by U+FFFD. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}

/** At most `maxLength` UTF-16 units of well-formed text, cut at a code point boundary. */
export function cutAtCodePoint(text: string, maxLength: number): string {
  const repaired = wellFormed(text);
  if (repaired.length <= maxLength) return repaired;
  let end = maxLength;
  const last = repaired.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return repaired.slice(0, end);
}

/** The blocks with every string made well-formed (blocks hold only strings and booleans). */
export function wellFormedBlocks(blocks: readonly Block[]): Block[] {
  return blocks.map((block) => {
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(block)) {
      copy[key] = typeof value === "string" ? wellFormed(value) : value;
    }
    return copy as unknown as Block;
  });
}
