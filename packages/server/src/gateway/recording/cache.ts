import { VerbatimError, type JsonValue } from "verbatim-llm/core";
import { recordedCallPath } from "./call-bytes.js";
import { ZERO_USAGE } from "verbatim-llm/pricing";
import { tokenPrice } from "verbatim-llm/internal";
import { checkCachePrefix, type CachePrefixDifference } from "verbatim-llm/providers";
import type { RecordedCallRow } from "../../store/repositories/recorded-calls.js";

/**
 * Where the prompt cache broke (docs/server/recorded-calls.md, "Cache report"): each recorded call compared
 * with the previous call of its chain by the cache-prefix checker (the engine of `verbatim
 * cache-diff`): the request's fields but the message list must be the same and its messages
 * the previous call's plus appended ones. A difference only in content written as a string
 * versus one text block, or only in the previous turn's signed material, keeps the prefix
 * (the model reads the same text); any other names the first differing path with a short
 * excerpt of both sides.
 */

export type CacheStatus = "first" | "kept" | "broken" | "unreadable";

export interface CallCacheEntry {
  readonly call_id: string;
  /** The call's facts and its exact bytes (GET /ai-gateway/recorded-calls/:id…). */
  readonly links: { readonly call: string; readonly request: string; readonly response: string };
  readonly created_at: string;
  readonly model: string;
  readonly path: string;
  readonly status_code: number;
  readonly message_count: number;
  readonly matched_count: number;
  readonly previous_call_id: string | null;
  readonly usage: {
    readonly input_tokens: number | null;
    readonly output_tokens: number | null;
    readonly cache_read_tokens: number | null;
    readonly cache_write_tokens: number | null;
  };
  /** `first`: no previous call; `kept`: the cacheable prefix was kept; `broken`: it was not. */
  readonly cache: CacheStatus;
  /** Cache reads over all prompt tokens of this call; null when the usage is unknown. */
  readonly hit_ratio: number | null;
  /** Tokens the previous call left in the cache that this call did not read from it. */
  readonly lost_tokens: number;
  /** What those tokens cost over cache reads (price table); null when the model is not priced. */
  readonly lost_dollars: number | null;
  readonly difference: {
    readonly path: string;
    readonly reason: string;
    readonly message_index: number | null;
    readonly before: string;
    readonly after: string;
  } | null;
}

const EXCERPT = 80;

function excerpt(text: string): string {
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT - 3)}...` : text;
}

/** The value at a checker path (`$.messages[3].content[1]["a b"]`), as short JSON. */
export function valueAtPath(body: string, path: string): string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return "";
  }
  const steps = path
    .replace(/^\$/, "")
    .match(/\.[A-Za-z_$][A-Za-z0-9_$]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\]/g);
  for (const step of steps ?? []) {
    if (value === null || typeof value !== "object") return "nothing";
    let key: string | number;
    if (step.startsWith(".")) key = step.slice(1);
    else if (step.startsWith('["')) key = JSON.parse(step.slice(1, -1)) as string;
    else key = Number(step.slice(1, -1));
    value = (value as Record<string | number, unknown>)[key];
    if (value === undefined) return "nothing";
  }
  return excerpt(JSON.stringify(value) ?? "nothing");
}

/** The body with every message's string content written as one text block. */
function normalisedBody(body: string): string {
  const value = JSON.parse(body) as Record<string, JsonValue>;
  const messages = value["messages"];
  if (!Array.isArray(messages)) return body;
  value["messages"] = messages.map((message) => {
    if (message === null || typeof message !== "object" || Array.isArray(message)) return message;
    const content = message["content"];
    return typeof content === "string"
      ? { ...message, content: [{ type: "text", text: content }] }
      : message;
  });
  return JSON.stringify(value);
}

/** Compares two request bodies; undefined when the cacheable prefix was kept. */
export function prefixBreak(
  before: string,
  after: string,
): CachePrefixDifference | "unreadable" | undefined {
  try {
    if (checkCachePrefix(before, after).ok) return undefined;
    const left = normalisedBody(before);
    const right = normalisedBody(after);
    const normalised = checkCachePrefix(left, right);
    if (normalised.ok) return undefined;
    if (checkCachePrefix(left, right, { ignoreSignedMaterial: true }).ok) return undefined;
    return normalised.difference;
  } catch (error) {
    if (error instanceof VerbatimError || error instanceof SyntaxError) return "unreadable";
    throw error;
  }
}

const PROVIDER_OF_FORMAT: Readonly<Record<string, string>> = {
  "anthropic-messages": "anthropic",
  "openai-chat": "openai-chat",
  "gemini-generate-content": "gemini",
};

function promptTokens(call: RecordedCallRow): number {
  return (call.input_tokens ?? 0) + (call.cache_read_tokens ?? 0) + (call.cache_write_tokens ?? 0);
}

/**
 * The tokens a call left in the prompt cache for its next call: its cache reads and writes;
 * Gemini reports no writes (its implicit caching keeps each prompt's prefix), so all its prompt.
 */
function leftInCache(call: RecordedCallRow): number {
  if (call.wire_format === "gemini-generate-content") return promptTokens(call);
  return (call.cache_read_tokens ?? 0) + (call.cache_write_tokens ?? 0);
}

function lostDollars(call: RecordedCallRow, lost: number): number | null {
  if (lost === 0) return 0;
  const provider = PROVIDER_OF_FORMAT[call.wire_format] ?? call.wire_format;
  const usage = {
    ...ZERO_USAGE,
    input: call.input_tokens ?? 0,
    output: call.output_tokens ?? 0,
    cacheRead: call.cache_read_tokens ?? 0,
    cacheWrite: call.cache_write_tokens ?? 0,
  };
  // The same call had those tokens been read from the cache: taken from writes, then input.
  const fromWrite = Math.min(lost, usage.cacheWrite);
  const fromInput = Math.min(lost - fromWrite, usage.input);
  const hit = {
    ...usage,
    cacheWrite: usage.cacheWrite - fromWrite,
    input: usage.input - fromInput,
    cacheRead: usage.cacheRead + fromWrite + fromInput,
  };
  const at = new Date(call.created_at);
  const actual = tokenPrice(provider, call.model, usage, at);
  const ideal = tokenPrice(provider, call.model, hit, at);
  if (actual === undefined || ideal === undefined) return null;
  return Math.max(0, actual - ideal);
}

/**
 * The cache entry of each call, given the calls, their previous calls (by id), and how to read a
 * call's request body as text (one body at a time: a report of long sessions holds two).
 */
export async function cacheEntries(
  calls: readonly RecordedCallRow[],
  previousById: ReadonlyMap<string, RecordedCallRow>,
  requestText: (call: RecordedCallRow) => Promise<string>,
): Promise<CallCacheEntry[]> {
  const entries: CallCacheEntry[] = [];
  let last: { id: string; text: string } | undefined;
  const textOf = async (call: RecordedCallRow): Promise<string> => {
    if (last?.id === call.id) return last.text;
    last = { id: call.id, text: await requestText(call) };
    return last.text;
  };
  for (const call of calls) {
    const previous =
      call.previous_call_id === null ? undefined : previousById.get(call.previous_call_id);
    const previousText = previous === undefined ? "" : await textOf(previous);
    const callText = previous === undefined ? "" : await textOf(call);
    entries.push(cacheEntry(call, previous, callText, previousText));
  }
  return entries;
}

function cacheEntry(
  call: RecordedCallRow,
  previous: RecordedCallRow | undefined,
  callText: string,
  previousText: string,
): CallCacheEntry {
  const found = previous === undefined ? undefined : prefixBreak(previousText, callText);
  const status: CacheStatus =
    previous === undefined
      ? "first"
      : found === undefined
        ? "kept"
        : found === "unreadable"
          ? "unreadable"
          : "broken";
  const prompt = promptTokens(call);
  const known = call.input_tokens !== null || call.cache_read_tokens !== null;
  // Tokens the previous call left in the cache (read or written) that this call could read.
  const cacheable = previous === undefined ? 0 : Math.min(leftInCache(previous), prompt);
  const lost = Math.max(0, cacheable - (call.cache_read_tokens ?? 0));
  const difference =
    found === undefined || found === "unreadable" || previous === undefined
      ? null
      : {
          path: found.path,
          reason: found.reason,
          message_index: found.messageIndex ?? null,
          before: valueAtPath(previousText, found.path),
          after: valueAtPath(callText, found.path),
        };
  const link = recordedCallPath(call.id);
  return {
    call_id: call.id,
    links: { call: link, request: `${link}/request`, response: `${link}/response` },
    created_at: call.created_at,
    model: call.model,
    path: call.path,
    status_code: call.status_code,
    message_count: call.message_count,
    matched_count: call.matched_count,
    previous_call_id: call.previous_call_id,
    usage: {
      input_tokens: call.input_tokens,
      output_tokens: call.output_tokens,
      cache_read_tokens: call.cache_read_tokens,
      cache_write_tokens: call.cache_write_tokens,
    },
    cache: status,
    hit_ratio: known && prompt > 0 ? (call.cache_read_tokens ?? 0) / prompt : null,
    lost_tokens: lost,
    lost_dollars: lostDollars(call, lost),
    difference,
  };
}

export interface ConversationCacheSummary {
  readonly conversation_id: string;
  readonly subject_uid: string;
  readonly calls: number;
  readonly hit_ratio: number | null;
  readonly lost_tokens: number;
  readonly lost_dollars: number | null;
  /** The first break of each call whose prefix was not kept. */
  readonly breaks: readonly {
    readonly call_id: string;
    readonly path: string;
    readonly reason: string;
  }[];
}

export function summarise(
  conversationId: string,
  subjectUid: string,
  entries: readonly CallCacheEntry[],
): ConversationCacheSummary {
  let read = 0;
  let prompt = 0;
  let lostTokens = 0;
  let lostDollarsTotal: number | null = 0;
  for (const entry of entries) {
    read += entry.usage.cache_read_tokens ?? 0;
    prompt +=
      (entry.usage.input_tokens ?? 0) +
      (entry.usage.cache_read_tokens ?? 0) +
      (entry.usage.cache_write_tokens ?? 0);
    lostTokens += entry.lost_tokens;
    lostDollarsTotal =
      lostDollarsTotal === null || entry.lost_dollars === null
        ? null
        : lostDollarsTotal + entry.lost_dollars;
  }
  return {
    conversation_id: conversationId,
    subject_uid: subjectUid,
    calls: entries.length,
    hit_ratio: prompt > 0 ? read / prompt : null,
    lost_tokens: lostTokens,
    lost_dollars: lostDollarsTotal,
    breaks: entries.flatMap((entry) =>
      entry.difference === null
        ? []
        : [
            {
              call_id: entry.call_id,
              path: entry.difference.path,
              reason: entry.difference.reason,
            },
          ],
    ),
  };
}
