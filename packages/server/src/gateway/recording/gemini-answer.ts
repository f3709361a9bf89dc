import type { Block } from "verbatim-llm/history";
import { createStreamParser, parseResponse, type RoundResult } from "verbatim-llm/providers";
import { callIds, callsAndText, partsOf, type GeminiFunctionCall } from "./gemini-calls.js";
import { record, type Json } from "./json-members.js";

/**
 * The answer and usage of a recorded Gemini call (docs/server/recorded-calls.md, "Gemini"), read
 * from the response bytes in any of the API's three forms: one JSON response
 * (`generateContent`), server-sent events (`streamGenerateContent?alt=sse`) or one JSON array of
 * responses (`streamGenerateContent` without `alt`). The library's Gemini parser reads the
 * answer; its function calls without an id get the ids the next request's `model` content gives
 * them (gemini-calls.ts), so the answer it gives back is this stored one.
 */

/** The response chunks of a decoded body (undefined when it is not one of the three forms). */
export function geminiChunks(body: string, streamed: boolean): Json[] | undefined {
  const values: unknown[] = [];
  if (streamed) {
    for (const line of body.split(/\r?\n/)) {
      if (!line.startsWith("data:")) continue;
      try {
        values.push(JSON.parse(line.slice(5)) as unknown);
      } catch {
        return undefined;
      }
    }
  } else {
    let value: unknown;
    try {
      value = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
    values.push(...(Array.isArray(value) ? (value as unknown[]) : [value]));
  }
  const chunks = values.map(record);
  return chunks.every((chunk) => chunk !== undefined) ? (chunks as Json[]) : undefined;
}

/** The parts of a response chunk's first candidate. */
function chunkParts(chunk: Json): readonly unknown[] {
  const candidates = chunk["candidates"];
  const first = Array.isArray(candidates) ? record(candidates[0]) : undefined;
  return partsOf(record(first?.["content"]));
}

/** The answer as a round result; undefined for an error status or a body it cannot read. */
export function geminiAnswer(
  model: string,
  statusCode: number,
  body: string,
  streamed: boolean,
): RoundResult | undefined {
  if (statusCode < 200 || statusCode >= 300) return undefined;
  const chunks = geminiChunks(body, streamed);
  if (chunks === undefined || chunks.length === 0) return undefined;
  let result: RoundResult;
  try {
    if (chunks.length === 1 && !streamed) result = parseResponse("gemini", body, model);
    else {
      const parser = createStreamParser("gemini", model);
      for (const chunk of chunks) parser.push({ data: JSON.stringify(chunk) });
      result = parser.finish();
    }
  } catch {
    return undefined;
  }
  const parts = chunks.flatMap(chunkParts);
  const { calls, text } = callsAndText(parts);
  return withCallIds(result, calls, callIds(calls, text));
}

/** The result with its tool calls named as the wire's calls are (in the same order). */
function withCallIds(
  result: RoundResult,
  calls: readonly GeminiFunctionCall[],
  ids: readonly string[],
): RoundResult {
  let ordinal = 0;
  const content = result.message.content.map((block): Block => {
    if (block.type !== "toolCall") return block;
    const id = ids[ordinal++];
    return id === undefined || calls[ordinal - 1]?.id !== undefined ? block : { ...block, id };
  });
  return { ...result, message: { ...result.message, content } };
}

/** The usage of a decoded body: its last `usageMetadata` (a stream's counts are running). */
export function geminiUsageMetadata(body: string, streamed: boolean): Json | undefined {
  const chunks = geminiChunks(body, streamed) ?? [];
  for (let index = chunks.length - 1; index >= 0; index--) {
    const usage = record(chunks[index]?.["usageMetadata"]);
    if (usage !== undefined) return usage;
  }
  return undefined;
}
