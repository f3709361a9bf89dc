import { RequestError, type ConsoleClient } from "./api.js";
import { badge, element } from "./dom.js";
import { recordedBodyNode } from "./recorded-body.js";

/**
 * Where the prompt cache broke (GET /ai-gateway/conversations/:id/cache): for a conversation
 * the gateway recorded (a stateless agent calling /v1/messages or /v1/chat/completions), each
 * call's usage and whether it kept the cacheable prefix of the previous call of its chain,
 * and for a break, where the prefix changed (before and after).
 */
interface CacheCall {
  readonly call_id: string;
  readonly links: { readonly call: string; readonly request: string; readonly response: string };
  readonly created_at: string;
  readonly model: string;
  readonly message_count: number;
  readonly usage: {
    readonly input_tokens: number | null;
    readonly output_tokens: number | null;
    readonly cache_read_tokens: number | null;
    readonly cache_write_tokens: number | null;
  };
  readonly cache: "first" | "kept" | "broken" | "unreadable";
  readonly hit_ratio: number | null;
  readonly lost_tokens: number;
  readonly lost_dollars: number | null;
  readonly difference: {
    readonly path: string;
    readonly reason: string;
    readonly message_index: number | null;
    readonly before: string;
    readonly after: string;
  } | null;
}

export interface CacheReport {
  readonly summary: {
    readonly calls: number;
    readonly hit_ratio: number | null;
    readonly lost_tokens: number;
    readonly lost_dollars: number | null;
    readonly breaks: readonly {
      readonly call_id: string;
      readonly path: string;
      readonly reason: string;
    }[];
  };
  readonly calls: readonly CacheCall[];
}

/** The report, or undefined when the conversation has no recorded calls (404). */
export async function loadCacheReport(
  client: ConsoleClient,
  conversationId: string,
  signal: AbortSignal,
): Promise<CacheReport | undefined> {
  try {
    return await client.raw<CacheReport>(
      `/ai-gateway/conversations/${encodeURIComponent(conversationId)}/cache`,
      signal,
    );
  } catch (error) {
    if (error instanceof RequestError && error.status === 404) return undefined;
    throw error;
  }
}

const percent = (ratio: number | null) => (ratio === null ? "—" : `${(ratio * 100).toFixed(1)} %`);
const number = (value: number | null) => (value === null ? "—" : value.toLocaleString("en"));

export function cacheReportNode(report: CacheReport, client: ConsoleClient): HTMLElement {
  const { summary } = report;
  const rows = report.calls.map((call) =>
    element(
      "tr",
      { class: `cache-${call.cache}` },
      element("td", {}, call.created_at),
      element("td", {}, call.model),
      element("td", {}, number(call.message_count)),
      element("td", {}, number(call.usage.input_tokens)),
      element("td", {}, number(call.usage.cache_read_tokens)),
      element("td", {}, number(call.usage.cache_write_tokens)),
      element("td", {}, number(call.usage.output_tokens)),
      element("td", {}, percent(call.hit_ratio)),
      element(
        "td",
        {},
        badge(call.cache, call.cache === "broken" ? "warn" : ""),
        call.difference === null
          ? ""
          : element(
              "details",
              {},
              element("summary", {}, `${call.difference.reason} at ${call.difference.path}`),
              element("div", { class: "note" }, "before (the previous call):"),
              element(
                "pre",
                { class: "diff" },
                element("span", { class: "remove" }, call.difference.before),
              ),
              element("div", { class: "note" }, "after (this call):"),
              element(
                "pre",
                { class: "diff" },
                element("span", { class: "add" }, call.difference.after),
              ),
            ),
        call.lost_tokens > 0
          ? ` lost ${number(call.lost_tokens)} tokens${call.lost_dollars === null ? "" : ` ($${call.lost_dollars.toFixed(4)})`}`
          : "",
      ),
      element(
        "td",
        { class: "recorded-call" },
        recordedBodyNode((path) => client.recordedBody(path), "request", call.links.request),
        recordedBodyNode((path) => client.recordedBody(path), "response", call.links.response),
      ),
    ),
  );
  const head = [
    "when",
    "model",
    "messages",
    "input",
    "cache read",
    "cache write",
    "output",
    "hit ratio",
    "prefix",
    "call",
  ];
  return element(
    "details",
    { class: "cache-report", ...(summary.breaks.length > 0 ? { open: "" } : {}) },
    element(
      "summary",
      {},
      `Prompt cache: ${summary.calls} recorded calls, hit ratio ${percent(summary.hit_ratio)}, ${summary.breaks.length} break${summary.breaks.length === 1 ? "" : "s"}`,
      summary.lost_tokens > 0
        ? `, ${number(summary.lost_tokens)} tokens lost${summary.lost_dollars === null ? "" : ` ($${summary.lost_dollars.toFixed(4)})`}`
        : "",
    ),
    element(
      "div",
      { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "recorded calls" },
      element(
        "table",
        {},
        element(
          "thead",
          {},
          element("tr", {}, ...head.map((name) => element("th", { scope: "col" }, name))),
        ),
        element("tbody", {}, ...rows),
      ),
    ),
  );
}
