/**
 * How the demo upstream (echo.ts) counts and cuts an answer, the same for each wire format it
 * speaks: usage is an estimate, and a streamed answer comes in several deltas.
 */

/** An estimate, as the echo counts no tokens: characters ÷ 4, rounded up. */
export const tokensOf = (text: string): number => Math.ceil(text.length / 4);

/** Splits text into pieces of a word and its following spaces (the stream's deltas). */
export function pieces(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text];
}

/** Splits JSON text into pieces of 8 characters (the stream's argument deltas). */
export function slices(text: string): string[] {
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += 8) parts.push(text.slice(start, start + 8));
  return parts;
}
