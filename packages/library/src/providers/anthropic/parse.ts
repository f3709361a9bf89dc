/**
 * Anthropic Messages responses: the JSON message and the SSE stream (`message_start`,
 * `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`, `ping`, `error`).
 * Usage: Anthropic's `input_tokens` already excludes cache reads and writes; in a stream the
 * usage of `message_delta` is cumulative, so each count present there replaces the earlier one.
 */
import { VerbatimError } from "../../core/errors.js";
import type { JsonObject, JsonValue } from "../../core/strict-json.js";
import type { Usage } from "../../pricing/types.js";
import type {
  PanelCitation,
  RoundResult,
  StopReason,
  StreamEvent,
  StreamParser,
} from "../types.js";
import { RoundBuilder, arrayOf, countOf, member, stringOf } from "../wire/round-builder.js";
import { parseProviderJson, type SseEvent } from "../wire/sse.js";

export function anthropicStopReason(raw: string | undefined): StopReason {
  switch (raw) {
    case "end_turn":
    case "stop_sequence":
      return "end";
    case "tool_use":
      return "tool_use";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens";
    case "refusal":
      return "refusal";
    case "pause_turn":
      return "pause";
    default:
      return "other";
  }
}

/**
 * Usage counts as Anthropic reports them; absent counts keep their earlier value. When the
 * usage lists `iterations` (server-side compaction runs a first sampling iteration that
 * summarises the conversation), the top-level counts are those of the last iteration alone:
 * every count is then the sum over the iterations, so the compaction's tokens are counted.
 */
function mergeUsage(previous: Usage, reported: JsonValue | undefined): Usage {
  if (reported === undefined || reported === null) return previous;
  const iterations = arrayOf(member(reported, "iterations"));
  const pick = (key: string, fallback: number) => {
    if (iterations.length > 0) {
      return iterations.reduce(
        (sum: number, iteration) => sum + countOf(member(iteration, key)),
        0,
      );
    }
    const value = member(reported, key);
    return typeof value === "number" ? countOf(value) : fallback;
  };
  const oneHour =
    iterations.length > 0
      ? iterations.reduce(
          (sum: number, iteration) =>
            sum + countOf(member(member(iteration, "cache_creation"), "ephemeral_1h_input_tokens")),
          0,
        )
      : member(member(reported, "cache_creation"), "ephemeral_1h_input_tokens");
  const searches = member(member(reported, "server_tool_use"), "web_search_requests");
  const cacheWrite1h = typeof oneHour === "number" ? countOf(oneHour) : previous.cacheWrite1h;
  return {
    input: pick("input_tokens", previous.input),
    output: pick("output_tokens", previous.output),
    cacheRead: pick("cache_read_input_tokens", previous.cacheRead),
    cacheWrite: pick("cache_creation_input_tokens", previous.cacheWrite),
    webSearchRequests:
      typeof searches === "number" ? countOf(searches) : previous.webSearchRequests,
    ...(cacheWrite1h !== undefined && cacheWrite1h > 0 ? { cacheWrite1h } : {}),
  };
}

function searchResultsText(content: JsonValue | undefined): string {
  const lines: string[] = [];
  for (const result of arrayOf(content)) {
    if (member(result, "type") === "web_search_result") {
      lines.push(
        `- ${stringOf(member(result, "title")) ?? ""} <${stringOf(member(result, "url")) ?? ""}>`,
      );
    }
  }
  const error = stringOf(member(content, "error_code"));
  if (error !== undefined) lines.push(`(search failed: ${error})`);
  // A search can find nothing: Anthropic then sends `"content": []`.
  else if (Array.isArray(content) && lines.length === 0) lines.push("(no results)");
  return lines.join("\n");
}

/** `[Web fetch: url]` text of a `web_fetch_tool_result`: the page's title, or the error. */
function fetchResultText(content: JsonValue | undefined): string {
  const error = stringOf(member(content, "error_code"));
  if (error !== undefined) return `(fetch failed: ${error})`;
  const url = stringOf(member(content, "url")) ?? "";
  const title = stringOf(member(member(content, "content"), "title"));
  return title === undefined || title === "" ? `- <${url}>` : `- ${title} <${url}>`;
}

/** A citation of a text block in format 1's shape (`url`, `title`, `citedText`). */
function citationOf(raw: JsonValue | undefined): PanelCitation | undefined {
  if (raw === undefined || raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return undefined;
  }
  const title = stringOf(member(raw, "title")) ?? stringOf(member(raw, "document_title"));
  const cited = stringOf(member(raw, "cited_text"));
  return {
    url: stringOf(member(raw, "url")) ?? "",
    ...(title === undefined ? {} : { title }),
    ...(cited === undefined ? {} : { citedText: cited }),
  };
}

interface OpenBlock {
  readonly type: string;
  readonly start: JsonObject;
  json: string;
  thinking: string;
  signature: string;
  textStarted: boolean;
  readonly citations: PanelCitation[];
}

export class AnthropicStreamParser implements StreamParser {
  private readonly builder: RoundBuilder;
  private readonly open = new Map<number, OpenBlock>();
  private readonly queries = new Map<string, string>();

  constructor(requestedModel: string) {
    this.builder = new RoundBuilder("anthropic", requestedModel);
  }

  push(event: SseEvent): readonly StreamEvent[] {
    if (event.data === "" || event.data === "[DONE]") return [];
    const data = parseProviderJson(event.data, "the Anthropic stream event");
    this.handle(data);
    return this.builder.drain();
  }

  finish(): RoundResult {
    return this.builder.buildFinished("the Anthropic stream ended before message_stop");
  }

  private handle(data: JsonValue): void {
    const type = stringOf(member(data, "type"));
    const builder = this.builder;
    switch (type) {
      case "message_start": {
        const message = member(data, "message");
        builder.responseId = stringOf(member(message, "id"));
        builder.model = stringOf(member(message, "model")) ?? builder.model;
        this.container(member(message, "container"));
        builder.setUsage(mergeUsage(builder.usage, member(message, "usage")));
        return;
      }
      case "content_block_start": {
        const index = countOf(member(data, "index"));
        const block = member(data, "content_block");
        if (
          block === undefined ||
          block === null ||
          typeof block !== "object" ||
          Array.isArray(block)
        ) {
          throw new VerbatimError(
            "provider_response_invalid",
            "content_block_start without a block",
          );
        }
        this.startBlock(index, block);
        return;
      }
      case "content_block_delta": {
        const open = this.open.get(countOf(member(data, "index")));
        if (open === undefined) return;
        const delta = member(data, "delta");
        switch (stringOf(member(delta, "type"))) {
          case "text_delta":
            builder.text(stringOf(member(delta, "text")) ?? "", !open.textStarted);
            open.textStarted = true;
            return;
          case "input_json_delta": {
            const partial = stringOf(member(delta, "partial_json")) ?? "";
            if (open.type === "tool_use")
              builder.toolCallDelta(`${countOf(member(data, "index"))}`, partial);
            else open.json += partial;
            return;
          }
          case "thinking_delta": {
            const text = stringOf(member(delta, "thinking")) ?? "";
            open.thinking += text;
            builder.thinking(text);
            return;
          }
          case "signature_delta":
            open.signature += stringOf(member(delta, "signature")) ?? "";
            return;
          case "compaction_delta":
            open.json += stringOf(member(delta, "content")) ?? "";
            return;
          case "citations_delta": {
            // A citation arrives before the text it supports: kept until the block ends.
            const citation = citationOf(member(delta, "citation"));
            if (citation !== undefined) open.citations.push(citation);
            return;
          }
          default:
            return;
        }
      }
      case "content_block_stop": {
        const index = countOf(member(data, "index"));
        const open = this.open.get(index);
        if (open !== undefined) this.stopBlock(index, open);
        this.open.delete(index);
        return;
      }
      case "message_delta": {
        const raw = stringOf(member(member(data, "delta"), "stop_reason"));
        if (raw !== undefined) builder.setStop(anthropicStopReason(raw), raw);
        this.container(member(member(data, "delta"), "container"));
        builder.setUsage(mergeUsage(builder.usage, member(data, "usage")));
        return;
      }
      case "message_stop":
        builder.finished = true;
        return;
      case "error": {
        const error = member(data, "error");
        throw new VerbatimError(
          "provider_http_error",
          `Anthropic stream error: ${stringOf(member(error, "message")) ?? "unknown"}`,
          { details: { type: stringOf(member(error, "type")) ?? "unknown" } },
        );
      }
      default:
        return;
    }
  }

  /** The code-execution container the response names (kept as received). */
  private container(container: JsonValue | undefined): void {
    if (container !== undefined && container !== null) this.builder.container = container;
  }

  private startBlock(index: number, block: JsonObject): void {
    const type = stringOf(block["type"]) ?? "";
    const open: OpenBlock = {
      type,
      start: block,
      json: "",
      thinking: "",
      signature: "",
      textStarted: false,
      citations: [],
    };
    this.open.set(index, open);
    const builder = this.builder;
    switch (type) {
      case "text": {
        const text = stringOf(block["text"]) ?? "";
        if (text !== "") {
          builder.text(text, true);
          open.textStarted = true;
        }
        for (const raw of arrayOf(block["citations"])) {
          const citation = citationOf(raw);
          if (citation !== undefined) open.citations.push(citation);
        }
        return;
      }
      case "tool_use":
        builder.toolCallStart(
          `${index}`,
          stringOf(block["id"]) ?? "",
          stringOf(block["name"]) ?? "",
        );
        if (block["caller"] !== undefined) builder.toolCallCaller(`${index}`, block["caller"]);
        return;
      case "thinking":
        open.thinking = stringOf(block["thinking"]) ?? "";
        open.signature = stringOf(block["signature"]) ?? "";
        builder.thinking(open.thinking);
        return;
      case "web_search_tool_result": {
        builder.addLeading(block);
        const callId = stringOf(block["tool_use_id"]) ?? "";
        builder.webSearch(this.queries.get(callId) ?? "", searchResultsText(block["content"]));
        return;
      }
      case "web_fetch_tool_result": {
        builder.addLeading(block);
        const content = block["content"];
        const callId = stringOf(block["tool_use_id"]) ?? "";
        const url = this.queries.get(callId) ?? stringOf(member(content, "url")) ?? "";
        builder.webFetch(url, fetchResultText(content));
        return;
      }
      case "server_tool_use":
        return;
      case "compaction":
        open.json = stringOf(block["content"]) ?? "";
        return;
      default:
        builder.addLeading(block);
        return;
    }
  }

  private stopBlock(index: number, open: OpenBlock): void {
    const builder = this.builder;
    switch (open.type) {
      case "text":
        for (const citation of open.citations) builder.citation(citation);
        return;
      case "compaction":
        builder.compaction(open.json, { type: "compaction", content: open.json });
        return;
      case "tool_use":
        builder.toolCallArguments(`${index}`, JSON.stringify(open.start["input"] ?? {}));
        return;
      case "thinking":
        builder.addLeading({
          type: "thinking",
          thinking: open.thinking,
          signature: open.signature,
        });
        return;
      case "server_tool_use": {
        let input: JsonValue = open.start["input"] ?? {};
        if (open.json !== "") input = parseProviderJson(open.json, "a server tool input");
        const id = stringOf(open.start["id"]) ?? "";
        // A web search's query, or a web fetch's URL: shown with the result.
        const query = stringOf(member(input, "query")) ?? stringOf(member(input, "url"));
        if (query !== undefined) this.queries.set(id, query);
        builder.addLeading({
          type: "server_tool_use",
          id,
          name: stringOf(open.start["name"]) ?? "",
          input,
        });
        return;
      }
      default:
        return;
    }
  }

  /** A whole (non-streamed) response message. */
  whole(message: JsonValue): RoundResult {
    this.handle({ type: "message_start", message: { ...(message as JsonObject), usage: null } });
    // Compatible servers may answer with the content as one string: it is the text.
    const content = member(message, "content");
    if (typeof content === "string") this.builder.text(content, true);
    for (const [index, block] of arrayOf(content).entries()) {
      if (block === null || typeof block !== "object" || Array.isArray(block)) continue;
      this.startBlock(index, block);
      const open = this.open.get(index) as OpenBlock;
      if (open.type === "tool_use") {
        this.builder.toolCallArguments(`${index}`, JSON.stringify(block["input"] ?? {}));
      } else if (open.type === "server_tool_use") {
        open.json = JSON.stringify(block["input"] ?? {});
      }
      this.stopBlock(index, open);
    }
    const raw = stringOf(member(message, "stop_reason"));
    if (raw !== undefined) this.builder.setStop(anthropicStopReason(raw), raw);
    this.builder.setUsage(mergeUsage(this.builder.usage, member(message, "usage")));
    this.builder.finished = true;
    return this.finish();
  }
}

export function parseAnthropicResponse(body: string, requestedModel: string): RoundResult {
  return new AnthropicStreamParser(requestedModel).whole(
    parseProviderJson(body, "the Anthropic response"),
  );
}
