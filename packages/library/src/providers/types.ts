/**
 * The public contract of the provider layer: what a renderer takes, what a request returns.
 *
 * A request runs in three steps, each usable alone:
 *   1. `renderRequest(provider, input)` → the exact request body (a string; pure, no I/O);
 *   2. `streamRound` / `sendRound` send those bytes unchanged and parse what comes back;
 *   3. the caller appends `result.message` to its history and keeps `result.signed` in memory
 *      for the rest of the running turn (never stored, A23).
 */
import type { JsonObject, JsonValue } from "../core/strict-json.js";
import type { ImageBytesLookup, Message } from "../history/message.js";
import type { Usage } from "../pricing/types.js";
import type { SseEvent } from "./wire/sse.js";

export type { Usage } from "../pricing/types.js";

/** The wire formats verbatim speaks. */
export type ProviderId = "anthropic" | "openai-chat" | "openai-responses" | "gemini" | "openrouter";

export const PROVIDER_IDS: readonly ProviderId[] = [
  "anthropic",
  "openai-chat",
  "openai-responses",
  "gemini",
  "openrouter",
];

/** True when a string names one of the wire formats verbatim speaks. */
export function isProviderId(text: string): text is ProviderId {
  return (PROVIDER_IDS as readonly string[]).includes(text);
}

/** A tool the model may call. `inputSchema` is a JSON Schema object, sent as written. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
  /**
   * OpenAI Responses: `"custom"` declares a custom tool (free-form text input instead of JSON
   * arguments, e.g. Codex's `apply_patch`): sent as `{type: "custom", name, description,
   * format?}`, its calls as `custom_tool_call` items and their results as
   * `custom_tool_call_output`. Every other wire format sends it as a function tool.
   */
  readonly kind?: "function" | "custom";
  /** OpenAI Responses custom tools: the input `format` (a grammar or `{type: "text"}`), as written. */
  readonly format?: JsonObject;
  /**
   * Strict schema adherence of the tool's arguments: sent as `strict` by OpenAI Responses
   * (default false there), OpenAI Chat and Anthropic (only when true); Gemini has no such field.
   */
  readonly strict?: boolean;
}

/** Prompt-cache settings (docs/providers.md, "Cache rules"). */
export interface CacheOptions {
  /**
   * Anthropic: put a `cache_control` breakpoint on the last eligible block of the newest
   * message (default true). It moves to the newest message at every request (A27).
   */
  readonly breakpoint?: boolean;
  /** Anthropic: the breakpoint's TTL, "5m" (default, written as plain `ephemeral`) or "1h". */
  readonly ttl?: "5m" | "1h";
  /**
   * Anthropic: the number of history messages the previous request of this conversation sent.
   * When more than 20 content blocks were added since then, a second breakpoint goes on the
   * last eligible block of that earlier prefix, so the cache lookup (which looks back at most
   * 20 blocks from a breakpoint) still finds the previous write.
   */
  readonly previousMessageCount?: number;
  /** OpenAI Chat, OpenAI Responses, OpenRouter: a stable `prompt_cache_key`. */
  readonly promptCacheKey?: string;
}

/** What a request carries besides the history. */
export interface RenderOptions {
  readonly model: string;
  /** The system prompt; absent or empty sends none. */
  readonly system?: string;
  readonly tools?: readonly ToolDefinition[];
  /**
   * OpenAI Responses: tools the provider runs itself (`{type: "web_search", …}`), sent as
   * written after `tools`. Every other wire format refuses them (`provider_invalid_options`).
   */
  readonly hostedTools?: readonly JsonObject[];
  /**
   * The most output tokens the model may write, sent to every provider. Absent: none is sent
   * and the provider's own limit applies, except Anthropic, which requires one (an error).
   */
  readonly maxTokens?: number;
  readonly cache?: CacheOptions;
  /** Ask for a streamed response (default true). Gemini streams by URL, not by body. */
  readonly stream?: boolean;
  /**
   * Provider-specific top-level fields (e.g. Anthropic `thinking`, OpenAI `reasoning`,
   * OpenRouter `provider`, Gemini `safetySettings`). Written after the fields verbatim owns,
   * keys sorted, values in canonical compact JSON. A key verbatim already writes is refused.
   */
  readonly extras?: JsonObject;
}

/**
 * Provider-native material a response carried that the history never stores (A23): thinking
 * blocks and their signatures, redacted thinking, encrypted reasoning, encrypted web search
 * results, Gemini thought signatures. The running turn keeps it in memory and re-sends it with
 * the assistant message it came with, within that turn only; the first request of the next
 * turn sends the same messages without it. Each value is the provider's JSON as received.
 */
export interface SignedMaterial {
  /** The provider that produced it; another provider's material is not sent (a warning). */
  readonly provider: ProviderId;
  /**
   * Native items sent before the message's own blocks: Anthropic `thinking`,
   * `redacted_thinking`, `server_tool_use` and `web_search_tool_result` blocks; OpenAI
   * Responses `reasoning` and `web_search_call` items; Gemini thought parts.
   */
  readonly leading: readonly JsonValue[];
  /** Gemini: `thoughtSignature` of the part rendered from history block `block`. */
  readonly blockSignatures: readonly { readonly block: number; readonly signature: string }[];
  /** Native items sent after the message's own blocks (Gemini: an empty signed text part). */
  readonly trailing: readonly JsonValue[];
  /** OpenRouter: the assistant message's `reasoning_details`. */
  readonly reasoningDetails: readonly JsonValue[];
  /**
   * Anthropic: the `caller` of a tool call made from code execution (programmatic tool
   * calling), by history block index; sent back on that `tool_use` block within the turn.
   */
  readonly toolCallCallers?: readonly { readonly block: number; readonly caller: JsonValue }[];
  /**
   * Anthropic: history block `block` is sent as this native block instead, within the turn (a
   * `compaction` block, whose summary the history keeps as text).
   */
  readonly nativeBlocks?: readonly { readonly block: number; readonly value: JsonValue }[];
}

/** Signed material attached to the assistant message at `messageIndex` of the history. */
export interface AttachedSignedMaterial {
  readonly messageIndex: number;
  readonly material: SignedMaterial;
}

/** Everything a renderer needs; the body is a function of this value alone. */
export interface RenderInput {
  readonly history: readonly Message[];
  /** The bytes of `image` blocks, by SHA-256. A missing image is an error. */
  readonly images: ImageBytesLookup;
  readonly options: RenderOptions;
  /** The running turn's signed material (in memory only; empty at the start of a turn). */
  readonly signed?: readonly AttachedSignedMaterial[];
}

export type RenderWarningCode =
  /** A text block with no text: providers refuse empty text, so it was not sent. */
  | "empty_text_dropped"
  /** Tool-call arguments that are not a JSON object, wrapped for a wire format taking objects. */
  | "arguments_not_object"
  /** Tool results moved in front of other blocks of the same user turn (Anthropic, Gemini). */
  | "tool_results_moved_first"
  /** Signed material of another provider (or for a message that is not an assistant's). */
  | "signed_material_ignored"
  /** A cache option this provider does not take. */
  | "cache_option_ignored"
  /** An image the model generated, sent as a text naming it (no image in assistant messages). */
  | "generated_image_as_text";

/** A lossy or surprising mapping, reported instead of silently applied. */
export interface RenderWarning {
  readonly code: RenderWarningCode;
  readonly message: string;
  /** Where in the history: `history[3].content[1]`. */
  readonly where: string;
}

export interface RenderedRequest {
  /** The exact request body. Sent as its UTF-8 bytes, unchanged. */
  readonly body: string;
  readonly warnings: readonly RenderWarning[];
}

/** Why the model stopped. `raw` keeps the provider's own word. */
export type StopReason =
  "end" | "tool_use" | "max_tokens" | "refusal" | "pause" | "content_filter" | "other";

/** What the panel shows of a round, in order. Thinking is shown, never stored (A23). */
export type PanelPart =
  | {
      readonly kind: "text";
      readonly text: string;
      /** Anthropic: the sources the text cites (web search and document citations). */
      readonly citations?: readonly PanelCitation[];
    }
  | { readonly kind: "thinking"; readonly text: string }
  /**
   * The provider compacted the conversation (Anthropic `compaction` block: `summary` is its
   * text; OpenAI Responses `compaction` item: encrypted, no summary).
   */
  | { readonly kind: "compaction"; readonly summary?: string }
  | {
      readonly kind: "webSearch";
      readonly query: string;
      readonly results: string;
      /** `"fetch"` for a web fetch (Anthropic `web_fetch`): `query` is the URL. */
      readonly action?: "fetch";
    };

/** A source a text block cites, in the shape of format 1's `citations` (docs/format-1.md). */
export interface PanelCitation {
  readonly url: string;
  readonly title?: string;
  readonly citedText?: string;
}

/** Something a response held that the result could not carry as sent, reported instead of silently lost. */
export interface RoundWarning {
  /**
   * `choices_ignored`: a Chat Completions response with several choices; only the first was
   * read. `image_data_invalid`: a generated image whose base64 was not well-formed (decoded
   * leniently).
   */
  readonly code: "choices_ignored" | "image_data_invalid";
  readonly message: string;
}

/** An image the model generated (OpenAI Responses `image_generation_call`): its bytes, by SHA-256. */
export interface ModelImage {
  readonly sha256: string;
  readonly mimeType: string;
  readonly bytes: Uint8Array;
}

/** One request's parsed response. */
export interface RoundResult {
  readonly provider: ProviderId;
  /** The model the provider says answered (falls back to the requested one). */
  readonly model: string;
  /** The provider's response id, when it gave one. */
  readonly responseId?: string;
  /**
   * The assistant message for the history: text and toolCall blocks only (web search
   * results enter as text, A23). Tool-call arguments are the bytes the model produced.
   */
  readonly message: Message;
  readonly panel: readonly PanelPart[];
  /** To keep in memory for the rest of the running turn, attached to `message`'s index. */
  readonly signed: SignedMaterial;
  /** Usage in the format's terms: `input` excludes cache reads and writes. */
  readonly usage: Usage;
  readonly stopReason: StopReason;
  readonly rawStopReason?: string;
  /**
   * The bytes of the `image` blocks of `message` the model generated: the caller stores them
   * beside the history (content-addressed) before it renders the next request.
   */
  readonly images?: readonly ModelImage[];
  /**
   * Anthropic: the code-execution `container` of the response (`{id, expires_at}` as received).
   * The next request of the turn reuses it by passing `extras: {container: id}`.
   */
  readonly container?: JsonValue;
  /** What the parser could not carry over unchanged (e.g. `choices_ignored`). */
  readonly warnings?: readonly RoundWarning[];
}

/** Events of a streamed round, provider-independent, ending with `done`. */
export type StreamEvent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly text: string }
  | { readonly type: "toolCallStart"; readonly id: string; readonly name: string }
  | { readonly type: "toolCallDelta"; readonly id: string; readonly argumentsDelta: string }
  | {
      readonly type: "webSearch";
      readonly query: string;
      readonly results: string;
      /** `"fetch"` for a web fetch: `query` is the URL. */
      readonly action?: "fetch";
    }
  | { readonly type: "usage"; readonly usage: Usage }
  | { readonly type: "done"; readonly result: RoundResult };

/** Where and how to send (keys and URLs from these options or from the environment). */
export interface TransportOptions {
  /** The API key; else the provider's usual environment variable (docs/providers.md). */
  readonly apiKey?: string;
  /** The API base URL; else `<PROVIDER>_BASE_URL` from the environment, else the public one. */
  readonly baseUrl?: string;
  /** The environment to read keys and URLs from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
  /** Milliseconds to wait for the response headers, and between two chunks of a stream. */
  readonly timeoutMs?: number;
  /** Retries of 429, 5xx, timeouts and connection resets (default 2). */
  readonly maxRetries?: number;
  /** First backoff delay in ms (default 500; doubled each retry, `retry-after` wins). */
  readonly retryBaseDelayMs?: number;
  /** The longest `retry-after` honoured before giving up, in ms (default 60,000). */
  readonly maxRetryDelayMs?: number;
  /** Extra HTTP headers (e.g. `anthropic-beta`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Called before each retry. */
  readonly onRetry?: (retry: RetryNotice) => void;
  /** The fetch to use (default the global one). */
  readonly fetch?: typeof fetch;
}

export interface RetryNotice {
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: string;
}

/** A request ready to send: the provider, the model (Gemini puts it in the URL) and the body. */
export interface OutgoingRequest {
  readonly provider: ProviderId;
  readonly model: string;
  readonly body: string;
  /** Whether the body asks for a stream (Gemini: use the streaming endpoint). */
  readonly stream: boolean;
}

/** Turns a provider's SSE events into stream events, then into the round's result. */
export interface StreamParser {
  push(event: SseEvent): readonly StreamEvent[];
  /** The round's result once the stream ended (throws if it ended early). */
  finish(): RoundResult;
}
