/**
 * Gemini responses: the JSON `GenerateContentResponse` and the SSE stream of them
 * (`streamGenerateContent?alt=sse`), each chunk carrying new parts. Usage: `promptTokenCount`
 * includes `cachedContentTokenCount`, so `input = promptTokenCount + toolUsePromptTokenCount -
 * cachedContentTokenCount`; `output = candidatesTokenCount + thoughtsTokenCount`. Thought
 * signatures stay with the parts they came on (signed material of the running turn).
 */
import { randomUUID } from "node:crypto";
import { VerbatimError } from "../../core/errors.js";
import { sha256Hex } from "../../core/hash.js";
import type { JsonValue } from "../../core/strict-json.js";
import type { Usage } from "../../pricing/types.js";
import type { RoundResult, StopReason, StreamEvent, StreamParser } from "../types.js";
import { RoundBuilder, arrayOf, countOf, member, stringOf } from "../wire/round-builder.js";
import { parseProviderJson, type SseEvent } from "../wire/sse.js";

export function geminiStopReason(raw: string | undefined, toolCalls: number): StopReason {
  switch (raw) {
    case "STOP":
      return toolCalls > 0 ? "tool_use" : "end";
    case "MAX_TOKENS":
      return "max_tokens";
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
      return "content_filter";
    default:
      return "other";
  }
}

function geminiUsage(metadata: JsonValue | undefined, searches: number): Usage {
  const prompt =
    countOf(member(metadata, "promptTokenCount")) +
    countOf(member(metadata, "toolUsePromptTokenCount"));
  const cacheRead = countOf(member(metadata, "cachedContentTokenCount"));
  return {
    input: Math.max(0, prompt - cacheRead),
    output:
      countOf(member(metadata, "candidatesTokenCount")) +
      countOf(member(metadata, "thoughtsTokenCount")),
    cacheRead,
    cacheWrite: 0,
    webSearchRequests: searches,
  };
}

export class GeminiStreamParser implements StreamParser {
  private readonly builder: RoundBuilder;
  private calls = 0;
  private searches = 0;
  private sawCandidate = false;

  constructor(requestedModel: string) {
    this.builder = new RoundBuilder("gemini", requestedModel);
  }

  push(event: SseEvent): readonly StreamEvent[] {
    if (event.data === "") return [];
    this.chunk(parseProviderJson(event.data, "the Gemini stream chunk"));
    return this.builder.drain();
  }

  finish(): RoundResult {
    if (!this.sawCandidate || this.builder.rawStopReason === undefined) {
      throw new VerbatimError(
        "provider_response_invalid",
        "the Gemini stream ended without a finishReason",
      );
    }
    return this.builder.build();
  }

  private chunk(data: JsonValue): void {
    const builder = this.builder;
    const error = member(data, "error");
    if (error !== undefined) {
      throw new VerbatimError(
        "provider_http_error",
        `Gemini error: ${stringOf(member(error, "message")) ?? "unknown"}`,
      );
    }
    const responseId = stringOf(member(data, "responseId"));
    if (responseId !== undefined && responseId !== "") builder.responseId ??= responseId;
    const version = stringOf(member(data, "modelVersion"));
    if (version !== undefined && version !== "") builder.model = version;
    const candidate = arrayOf(member(data, "candidates"))[0];
    if (candidate !== undefined) {
      this.sawCandidate = true;
      for (const part of arrayOf(member(member(candidate, "content"), "parts"))) this.part(part);
      const grounding = member(candidate, "groundingMetadata");
      const queries = arrayOf(member(grounding, "webSearchQueries"));
      if (queries.length > 0) {
        this.searches += queries.length;
        const results = arrayOf(member(grounding, "groundingChunks"))
          .map((chunk) => member(chunk, "web"))
          .filter((web) => web !== undefined)
          .map(
            (web) =>
              `- ${stringOf(member(web, "title")) ?? ""} <${stringOf(member(web, "uri")) ?? ""}>`,
          )
          .join("\n");
        builder.webSearch(queries.map((query) => stringOf(query) ?? "").join("; "), results);
      }
      const raw = stringOf(member(candidate, "finishReason"));
      if (raw !== undefined) {
        builder.setStop(geminiStopReason(raw, this.calls), raw);
        builder.finished = true;
      }
    }
    const metadata = member(data, "usageMetadata");
    if (metadata !== undefined) builder.setUsage(geminiUsage(metadata, this.searches));
  }

  private part(part: JsonValue): void {
    const builder = this.builder;
    const signature = stringOf(member(part, "thoughtSignature"));
    const text = stringOf(member(part, "text"));
    const call = member(part, "functionCall");
    if (member(part, "thought") === true) {
      builder.thinking(text ?? "");
      if (signature !== undefined) builder.addLeading(part);
      return;
    }
    if (call !== undefined) {
      const ordinal = this.calls++;
      const key = `${ordinal}`;
      const id = stringOf(member(call, "id")) ?? this.callId(ordinal);
      builder.toolCallStart(
        key,
        id,
        stringOf(member(call, "name")) ?? "",
        JSON.stringify(member(call, "args") ?? {}),
      );
      if (signature !== undefined) builder.signToolCall(key, signature);
      return;
    }
    if (text !== undefined) {
      if (text !== "") builder.text(text);
      if (signature !== undefined && (text === "" || !builder.signLastText(signature))) {
        builder.addTrailing(part);
      }
    }
  }

  /**
   * A `functionCall` may come without an `id` (captured gemini-3-pro-preview responses have
   * none): the id is then derived from the response id and the call's position, so the same
   * bytes always give the same history however the stream was split. Without a response id
   * it is random.
   */
  private callId(ordinal: number): string {
    const responseId = this.builder.responseId;
    const seed =
      responseId === undefined || responseId === ""
        ? randomUUID()
        : sha256Hex(`gemini-call:${responseId}:${ordinal}`);
    return `call_${seed.replaceAll("-", "").slice(0, 24)}`;
  }

  whole(response: JsonValue): RoundResult {
    this.chunk(response);
    return this.finish();
  }
}

export function parseGeminiResponse(body: string, requestedModel: string): RoundResult {
  return new GeminiStreamParser(requestedModel).whole(
    parseProviderJson(body, "the Gemini response"),
  );
}
