import * as zlib from "node:zlib";
import { geminiUsageMetadata } from "./gemini-answer.js";

/**
 * The usage a provider reported in one response (docs/server/recorded-calls.md, "Recorded calls"), read from
 * the bytes the client received: Anthropic Messages (`usage` of the JSON body, or
 * `message_start` then `message_delta` of the stream) and OpenAI Chat (`usage` of the body or of
 * the stream's last chunk; `prompt_tokens_details.cached_tokens` is the cache read, and
 * `input` is the prompt tokens not read from the cache) and Gemini (`usageMetadata`, below).
 * Unknown numbers are null.
 */
export interface RecordedUsage {
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
}

export type WireFormat = "anthropic-messages" | "openai-chat" | "gemini-generate-content";

/** The member of a request body that holds its messages: Gemini's `contents`, else `messages`. */
export function wireMessagesKey(format: WireFormat | undefined): "messages" | "contents" {
  return format === "gemini-generate-content" ? "contents" : "messages";
}

const NONE: RecordedUsage = {
  inputTokens: null,
  outputTokens: null,
  cacheReadTokens: null,
  cacheWriteTokens: null,
};

/** The response bytes without their content coding; undefined when it cannot be undone. */
export function decodeBody(bytes: Buffer, contentEncoding: string | undefined): Buffer | undefined {
  const coding = (contentEncoding ?? "identity").trim().toLowerCase();
  try {
    if (coding === "identity" || coding === "") return bytes;
    if (coding === "gzip" || coding === "x-gzip") return zlib.gunzipSync(bytes);
    if (coding === "deflate") return zlib.inflateSync(bytes);
    if (coding === "br") return zlib.brotliDecompressSync(bytes);
    const zstd = (zlib as { zstdDecompressSync?: (input: Buffer) => Buffer }).zstdDecompressSync;
    if (coding === "zstd" && zstd !== undefined) return zstd(bytes);
  } catch {
    return undefined;
  }
  return undefined;
}

function numberOr(value: unknown, fallback: number | null): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function anthropicUsage(usage: Record<string, unknown>, base: RecordedUsage): RecordedUsage {
  return {
    inputTokens: numberOr(usage["input_tokens"], base.inputTokens),
    outputTokens: numberOr(usage["output_tokens"], base.outputTokens),
    cacheReadTokens: numberOr(usage["cache_read_input_tokens"], base.cacheReadTokens),
    cacheWriteTokens: numberOr(usage["cache_creation_input_tokens"], base.cacheWriteTokens),
  };
}

function chatUsage(usage: Record<string, unknown>): RecordedUsage {
  const prompt = numberOr(usage["prompt_tokens"], null);
  const cached = numberOr(record(usage["prompt_tokens_details"])?.["cached_tokens"], 0) ?? 0;
  return {
    inputTokens: prompt === null ? null : prompt - cached,
    outputTokens: numberOr(usage["completion_tokens"], null),
    cacheReadTokens: cached,
    cacheWriteTokens: null,
  };
}

/** The JSON values of the `data:` lines of a server-sent event stream. */
function eventData(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "" || data === "[DONE]") continue;
    try {
      out.push(JSON.parse(data));
    } catch {
      // A line that is not JSON carries no usage.
    }
  }
  return out;
}

/**
 * Gemini's `usageMetadata`: `promptTokenCount` includes `cachedContentTokenCount` (the implicit
 * or explicit cache's read), so input is the rest of the prompt (and of the tool-use prompt);
 * output is the candidates' and thoughts' tokens. Gemini reports no cache writes.
 */
function geminiUsage(usage: Record<string, unknown>): RecordedUsage {
  const prompt = numberOr(usage["promptTokenCount"], null);
  const cached = numberOr(usage["cachedContentTokenCount"], 0) ?? 0;
  const toolPrompt = numberOr(usage["toolUsePromptTokenCount"], 0) ?? 0;
  const candidates = numberOr(usage["candidatesTokenCount"], null);
  const thoughts = numberOr(usage["thoughtsTokenCount"], 0) ?? 0;
  return {
    inputTokens: prompt === null ? null : Math.max(0, prompt + toolPrompt - cached),
    outputTokens: candidates === null && thoughts === 0 ? null : (candidates ?? 0) + thoughts,
    cacheReadTokens: cached,
    cacheWriteTokens: null,
  };
}

/** The usage of a decoded response body (JSON or a stream); all null when none is found. */
export function usageOf(format: WireFormat, text: string, streamed: boolean): RecordedUsage {
  if (format === "gemini-generate-content") {
    const found = geminiUsageMetadata(text, streamed);
    return found === undefined ? NONE : geminiUsage(found);
  }
  let values: unknown[];
  if (streamed) values = eventData(text);
  else {
    try {
      values = [JSON.parse(text)];
    } catch {
      return NONE;
    }
  }
  let usage = NONE;
  for (const value of values) {
    const event = record(value);
    if (event === undefined) continue;
    if (format === "anthropic-messages") {
      const found = record(event["usage"]) ?? record(record(event["message"])?.["usage"]);
      if (found !== undefined) usage = anthropicUsage(found, usage);
    } else {
      const found = record(event["usage"]);
      if (found !== undefined) usage = chatUsage(found);
    }
  }
  return usage;
}
