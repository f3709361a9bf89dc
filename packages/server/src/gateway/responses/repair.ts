import { repairStoredText } from "verbatim-llm/internal";
import type { Block } from "verbatim-llm/history";

/**
 * What an upstream sends that the store cannot keep as it is, made storable (docs/server/responses.md,
 * "Response lifecycle"), by the one stored-text rule (src/core/stored-text.ts): lone surrogates
 * and NULs become U+FFFD, texts over a length limit are cut at a code point boundary (never
 * between the two halves of a pair).
 */

/** The text with each lone surrogate and NUL replaced by U+FFFD. */
export function storableText(text: string): string {
  return repairStoredText(text);
}

/** At most `maxLength` UTF-16 units of storable text, cut at a code point boundary. */
export function cutAtCodePoint(text: string, maxLength: number): string {
  const repaired = storableText(text);
  if (repaired.length <= maxLength) return repaired;
  let end = maxLength;
  const last = repaired.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return repaired.slice(0, end);
}

/** The blocks with every string made storable (blocks hold only strings and booleans). */
export function storableBlocks(blocks: readonly Block[]): Block[] {
  return blocks.map((block) => {
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(block)) {
      copy[key] = typeof value === "string" ? storableText(value) : value;
    }
    return copy as unknown as Block;
  });
}
