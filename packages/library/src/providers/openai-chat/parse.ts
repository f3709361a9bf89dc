/**
 * OpenAI Chat Completions responses (shared with OpenRouter): the JSON completion and the SSE
 * stream of `chat.completion.chunk`s ending with `data: [DONE]`. Usage: `prompt_tokens`
 * includes cached tokens, so `input = prompt_tokens - cached_tokens - cache_write_tokens`;
 * OpenRouter's `usage.cost` (US dollars) becomes `reportedCost`, its `reasoning_details`
 * signed material of the running turn.
 */
import { VerbatimError } from "../../core/errors.js";
import type { JsonValue } from "../../core/strict-json.js";
import type { Usage } from "../../pricing/types.js";
import type { RoundResult, StopReason, StreamEvent, StreamParser } from "../types.js";
import { RoundBuilder, arrayOf, countOf, member, stringOf } from "../wire/round-builder.js";
import { parseProviderJson, type SseEvent } from "../wire/sse.js";

export function chatStopReason(raw: string | undefined): StopReason {
  switch (raw) {
    case "stop":
      return "end";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "content_filter";
    default:
      return "other";
  }
}

export function chatUsage(usage: JsonValue | undefined): Usage {
  const prompt = countOf(member(usage, "prompt_tokens"));
  const details = member(usage, "prompt_tokens_details");
  const cacheRead = countOf(member(details, "cached_tokens"));
  const cacheWrite = countOf(member(details, "cache_write_tokens"));
  const cost = member(usage, "cost");
  const searches = member(member(usage, "server_tool_use"), "web_search_requests");
  return {
    input: Math.max(0, prompt - cacheRead - cacheWrite),
    output: countOf(member(usage, "completion_tokens")),
    cacheRead,
    cacheWrite,
    webSearchRequests: countOf(searches),
    ...(typeof cost === "number" && Number.isFinite(cost) && cost >= 0
      ? { reportedCost: cost }
      : {}),
  };
}

const CHOICES_IGNORED =
  "the response holds several choices (the request asked for n > 1); only the first (index 0) was read: ask for one choice (n = 1) to lose none";

export class ChatStreamParser implements StreamParser {
  private readonly builder: RoundBuilder;
  private readonly toolKeys = new Map<number, string>();
  private choicesWarned = false;

  constructor(provider: "openai-chat" | "openrouter", requestedModel: string) {
    this.builder = new RoundBuilder(provider, requestedModel);
  }

  push(event: SseEvent): readonly StreamEvent[] {
    if (event.data === "") return [];
    if (event.data === "[DONE]") {
      this.builder.finished = true;
      return [];
    }
    const chunk = parseProviderJson(event.data, "the chat completion chunk");
    const error = member(chunk, "error");
    if (error !== undefined) {
      throw new VerbatimError(
        "provider_http_error",
        `stream error: ${stringOf(member(error, "message")) ?? JSON.stringify(error)}`,
      );
    }
    this.header(chunk);
    for (const choice of arrayOf(member(chunk, "choices"))) {
      // Only the first choice is read (n > 1 asks for several answers; one history holds one).
      if (countOf(member(choice, "index")) !== 0) {
        this.extraChoice();
        continue;
      }
      const delta = member(choice, "delta");
      this.message(delta, true);
      const raw = stringOf(member(choice, "finish_reason"));
      if (raw !== undefined) this.builder.setStop(chatStopReason(raw), raw);
    }
    const usage = member(chunk, "usage");
    if (usage !== undefined && usage !== null) this.builder.setUsage(chatUsage(usage));
    return this.builder.drain();
  }

  finish(): RoundResult {
    if (!this.builder.finished && this.builder.rawStopReason === undefined) {
      throw new VerbatimError(
        "provider_response_invalid",
        "the chat completion stream ended before [DONE]",
      );
    }
    this.fixStop();
    return this.builder.build();
  }

  private header(chunk: JsonValue): void {
    // Azure OpenAI opens its streams with a chunk whose `id` and `model` are "" (and whose
    // `choices` are empty, carrying `prompt_filter_results`): an empty id is no id.
    const id = stringOf(member(chunk, "id"));
    if (id !== undefined && id !== "") this.builder.responseId ??= id;
    const model = stringOf(member(chunk, "model"));
    if (model !== undefined && model !== "") this.builder.model = model;
  }

  /** A message (whole) or a delta (streamed): reasoning, text, tool calls. */
  private message(message: JsonValue | undefined, streamed: boolean): void {
    if (message === undefined || message === null) return;
    const builder = this.builder;
    const reasoning =
      stringOf(member(message, "reasoning")) ?? stringOf(member(message, "reasoning_content"));
    if (reasoning !== undefined) builder.thinking(reasoning);
    for (const detail of arrayOf(member(message, "reasoning_details")))
      builder.addReasoningDetail(detail);
    const content = member(message, "content");
    if (typeof content === "string") builder.text(content);
    else {
      // Some compatible servers answer with content parts instead of a string.
      for (const part of arrayOf(content)) {
        const kind = stringOf(member(part, "type"));
        const text = stringOf(member(part, kind === "refusal" ? "refusal" : "text"));
        if (text !== undefined) builder.text(text, true);
      }
    }
    const refusal = stringOf(member(message, "refusal"));
    if (refusal !== undefined && refusal !== "") builder.text(refusal, !streamed);
    for (const [position, call] of arrayOf(member(message, "tool_calls")).entries()) {
      const index = streamed ? countOf(member(call, "index")) : position;
      const fn = member(call, "function");
      const args = stringOf(member(fn, "arguments")) ?? "";
      let key = this.toolKeys.get(index);
      if (key === undefined) {
        key = `${index}`;
        this.toolKeys.set(index, key);
        builder.toolCallStart(
          key,
          stringOf(member(call, "id")) ?? `call_${index}`,
          stringOf(member(fn, "name")) ?? "",
          args,
        );
      } else builder.toolCallDelta(key, args);
    }
  }

  /** OpenAI-compatible servers sometimes say `stop` after tool calls. */
  private fixStop(): void {
    if (this.builder.toolCallCount > 0 && this.builder.stopReason === "end") {
      this.builder.setStop("tool_use", this.builder.rawStopReason);
    }
  }

  /** Reports, once, that a response held more choices than the one read. */
  private extraChoice(): void {
    if (this.choicesWarned) return;
    this.choicesWarned = true;
    this.builder.warn({
      code: "choices_ignored",
      message: CHOICES_IGNORED,
    });
  }

  whole(completion: JsonValue): RoundResult {
    this.header(completion);
    const choices = arrayOf(member(completion, "choices"));
    const choice =
      choices.find((candidate) => countOf(member(candidate, "index")) === 0) ?? choices[0];
    if (choice === undefined) {
      throw new VerbatimError("provider_response_invalid", "the chat completion has no choices");
    }
    if (choices.length > 1) {
      this.extraChoice();
    }
    this.message(member(choice, "message"), false);
    const raw = stringOf(member(choice, "finish_reason"));
    if (raw !== undefined) this.builder.setStop(chatStopReason(raw), raw);
    this.builder.setUsage(chatUsage(member(completion, "usage")));
    this.builder.finished = true;
    return this.finish();
  }
}

export function parseChatResponse(
  provider: "openai-chat" | "openrouter",
  body: string,
  requestedModel: string,
): RoundResult {
  return new ChatStreamParser(provider, requestedModel).whole(
    parseProviderJson(body, "the chat completion"),
  );
}
