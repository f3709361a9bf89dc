/**
 * OpenAI Responses responses: the JSON response object and the SSE stream of typed events
 * (`response.created`, `response.output_item.added`/`.done`, `response.output_text.delta`,
 * `response.function_call_arguments.delta`, `response.reasoning_summary_text.delta`,
 * `response.completed`/`.incomplete`/`.failed`, `error`). Usage: `input_tokens` includes cached
 * tokens, so `input = input_tokens - cached_tokens`. Reasoning items are signed material.
 */
import { base64Decode } from "../../core/bytes.js";
import { VerbatimError } from "../../core/errors.js";
import { sha256Hex } from "../../core/hash.js";
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

const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  png: "image/png",
  jpeg: "image/jpeg",
  jpg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
};

/**
 * The image of an `image_generation_call` (base64 `result`, `output_format`). Base64 that is
 * not well-formed is decoded leniently and reported, never dropped.
 */
function generatedImage(item: JsonValue | undefined, builder: RoundBuilder): void {
  const result = stringOf(member(item, "result"));
  if (result === undefined || result === "") return;
  const format = stringOf(member(item, "output_format")) ?? "png";
  const mimeType = IMAGE_FORMATS[format] ?? "image/png";
  let bytes = base64Decode(result);
  if (bytes === undefined) {
    bytes = new Uint8Array(Buffer.from(result, "base64"));
    builder.warn({
      code: "image_data_invalid",
      message: `the generated image ${stringOf(member(item, "id")) ?? ""} is not well-formed base64; its bytes were decoded leniently`,
    });
  }
  builder.image({ sha256: sha256Hex(bytes), mimeType, bytes });
}

/** The text of an assistant `message` item: its parts, or a plain string. */
function messageText(item: JsonValue | undefined, builder: RoundBuilder): void {
  const content = member(item, "content");
  if (typeof content === "string") {
    builder.text(content, true);
    return;
  }
  for (const part of arrayOf(content)) {
    const kind = stringOf(member(part, "type"));
    if (kind === "output_text") builder.text(stringOf(member(part, "text")) ?? "", true);
    else if (kind === "refusal") builder.text(stringOf(member(part, "refusal")) ?? "", true);
  }
}

/** Call items whose calls enter the history: function calls and custom tool calls. */
function callInput(item: JsonValue | undefined): string | undefined {
  switch (stringOf(member(item, "type"))) {
    case "function_call":
      return stringOf(member(item, "arguments")) ?? "";
    case "custom_tool_call":
      return stringOf(member(item, "input")) ?? "";
    default:
      return undefined;
  }
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
        const input = callInput(item);
        if (input !== undefined) {
          builder.toolCallStart(
            this.itemKey(data, item),
            stringOf(member(item, "call_id")) ?? "",
            stringOf(member(item, "name")) ?? "",
            input,
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
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta": {
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
          case "custom_tool_call":
            builder.toolCallArguments(this.itemKey(data, item), callInput(item) ?? "");
            return;
          case "image_generation_call":
            generatedImage(item, builder);
            return;
          case "compaction":
            if (item !== undefined) builder.compaction(undefined, item);
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
          messageText(item, builder);
          break;
        case "function_call":
        case "custom_tool_call":
          builder.toolCallStart(
            stringOf(member(item, "id")) ?? `${index}`,
            stringOf(member(item, "call_id")) ?? "",
            stringOf(member(item, "name")) ?? "",
            callInput(item) ?? "",
          );
          break;
        case "image_generation_call":
          generatedImage(item, builder);
          break;
        case "compaction":
          builder.compaction(undefined, item);
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
