/**
 * OpenAI Responses responses: the JSON response object and the SSE stream of typed events
 * (`response.created`, `response.output_item.added`/`.done`, `response.output_text.delta`,
 * `response.function_call_arguments.delta`, `response.reasoning_summary_text.delta`,
 * `response.completed`/`.incomplete`/`.failed`, `error`). Usage: `input_tokens` includes cached
 * tokens, so `input = input_tokens - cached_tokens`. Reasoning items are signed material.
 */
import { VerbatimError } from "../../core/errors.js";
import type { JsonValue } from "../../core/strict-json.js";
import type { Usage } from "../../pricing/types.js";
import type { RoundResult, StreamEvent, StreamParser } from "../types.js";
import { RoundBuilder, arrayOf, countOf, member, stringOf } from "../wire/round-builder.js";
import { parseProviderJson, type SseEvent } from "../wire/sse.js";

function responsesUsage(usage: JsonValue | undefined, searches: number): Usage {
  const input = countOf(member(usage, "input_tokens"));
  const cacheRead = countOf(member(member(usage, "input_tokens_details"), "cached_tokens"));
  return {
    input: Math.max(0, input - cacheRead),
    output: countOf(member(usage, "output_tokens")),
    cacheRead,
    cacheWrite: 0,
    webSearchRequests: searches,
  };
}

function searchText(item: JsonValue): { query: string; results: string } {
  const action = member(item, "action");
  const query = stringOf(member(action, "query")) ?? "";
  const lines = arrayOf(member(action, "sources")).map(
    (source) => `- <${stringOf(member(source, "url")) ?? ""}>`,
  );
  return { query, results: lines.join("\n") };
}

export class ResponsesStreamParser implements StreamParser {
  private readonly builder: RoundBuilder;
  private lastTextKey = "";
  private searches = 0;

  constructor(requestedModel: string) {
    this.builder = new RoundBuilder("openai-responses", requestedModel);
  }

  push(event: SseEvent): readonly StreamEvent[] {
    if (event.data === "" || event.data === "[DONE]") return [];
    const data = parseProviderJson(event.data, "the Responses stream event");
    this.handle(data);
    return this.builder.drain();
  }

  finish(): RoundResult {
    return this.builder.buildFinished("the Responses stream ended before response.completed");
  }

  private handle(data: JsonValue): void {
    const builder = this.builder;
    const type = stringOf(member(data, "type"));
    switch (type) {
      case "response.created":
      case "response.in_progress":
        this.header(member(data, "response"));
        return;
      case "response.output_item.added": {
        const item = member(data, "item");
        if (member(item, "type") === "function_call") {
          builder.toolCallStart(
            this.itemKey(data, item),
            stringOf(member(item, "call_id")) ?? "",
            stringOf(member(item, "name")) ?? "",
            stringOf(member(item, "arguments")) ?? "",
          );
        }
        return;
      }
      case "response.output_text.delta": {
        const key = `${stringOf(member(data, "item_id")) ?? ""}:${countOf(member(data, "content_index"))}`;
        builder.text(stringOf(member(data, "delta")) ?? "", key !== this.lastTextKey);
        this.lastTextKey = key;
        return;
      }
      case "response.function_call_arguments.delta": {
        const key = stringOf(member(data, "item_id")) ?? `${countOf(member(data, "output_index"))}`;
        if (builder.hasToolCall(key))
          builder.toolCallDelta(key, stringOf(member(data, "delta")) ?? "");
        return;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        builder.thinking(stringOf(member(data, "delta")) ?? "");
        return;
      case "response.output_item.done": {
        const item = member(data, "item");
        switch (stringOf(member(item, "type"))) {
          case "reasoning":
            if (item !== undefined) builder.addLeading(item);
            return;
          case "function_call":
            builder.toolCallArguments(
              this.itemKey(data, item),
              stringOf(member(item, "arguments")) ?? "",
            );
            return;
          case "web_search_call": {
            this.searches++;
            const { query, results } = searchText(item ?? null);
            builder.webSearch(query, results);
            return;
          }
          default:
            return;
        }
      }
      case "response.completed":
      case "response.incomplete":
        this.complete(member(data, "response"));
        return;
      case "response.failed":
      case "error": {
        const error = member(member(data, "response"), "error") ?? data;
        throw new VerbatimError(
          "provider_http_error",
          `Responses stream error: ${stringOf(member(error, "message")) ?? "unknown"}`,
        );
      }
      default:
        return;
    }
  }

  private itemKey(data: JsonValue, item: JsonValue | undefined): string {
    return stringOf(member(item, "id")) ?? `${countOf(member(data, "output_index"))}`;
  }

  private header(response: JsonValue | undefined): void {
    this.builder.responseId ??= stringOf(member(response, "id"));
    const model = stringOf(member(response, "model"));
    if (model !== undefined && model !== "") this.builder.model = model;
  }

  private complete(response: JsonValue | undefined): void {
    this.header(response);
    const status = stringOf(member(response, "status"));
    const reason = stringOf(member(member(response, "incomplete_details"), "reason"));
    if (status === "incomplete") {
      this.builder.setStop(
        reason === "max_output_tokens"
          ? "max_tokens"
          : reason === "content_filter"
            ? "content_filter"
            : "other",
        reason ?? status,
      );
    } else {
      this.builder.setStop(
        this.builder.toolCallCount > 0 ? "tool_use" : "end",
        status ?? "completed",
      );
    }
    this.builder.setUsage(responsesUsage(member(response, "usage"), this.searches));
    this.builder.finished = true;
  }

  whole(response: JsonValue): RoundResult {
    this.header(response);
    const builder = this.builder;
    for (const [index, item] of arrayOf(member(response, "output")).entries()) {
      switch (stringOf(member(item, "type"))) {
        case "message":
          for (const part of arrayOf(member(item, "content"))) {
            const kind = stringOf(member(part, "type"));
            if (kind === "output_text") builder.text(stringOf(member(part, "text")) ?? "", true);
            else if (kind === "refusal")
              builder.text(stringOf(member(part, "refusal")) ?? "", true);
          }
          break;
        case "function_call":
          builder.toolCallStart(
            stringOf(member(item, "id")) ?? `${index}`,
            stringOf(member(item, "call_id")) ?? "",
            stringOf(member(item, "name")) ?? "",
            stringOf(member(item, "arguments")) ?? "",
          );
          break;
        case "reasoning":
          for (const part of arrayOf(member(item, "summary")))
            builder.thinking(stringOf(member(part, "text")) ?? "");
          builder.addLeading(item);
          break;
        case "web_search_call": {
          this.searches++;
          const { query, results } = searchText(item);
          builder.webSearch(query, results);
          break;
        }
        default:
          break;
      }
    }
    this.complete(response);
    return this.finish();
  }
}

export function parseResponsesResponse(body: string, requestedModel: string): RoundResult {
  return new ResponsesStreamParser(requestedModel).whole(
    parseProviderJson(body, "the Responses response"),
  );
}
