import { element } from "./dom.js";

/** Reads a recorded call's body (ConsoleClient.recordedBody). */
export type RecordedBodyReader = (
  path: string,
) => Promise<{ readonly text: string; readonly contentType: string }>;

/** The console's links to a recorded call (GET /ai-gateway/recorded-calls/:id) and its bodies. */
export function recordedCallLinks(callId: string): {
  call: string;
  request: string;
  response: string;
} {
  const base = `/ai-gateway/recorded-calls/${encodeURIComponent(callId)}`;
  return { call: base, request: `${base}/request`, response: `${base}/response` };
}

/** The cache verdict in a recorded call's facts. */
interface CacheVerdict {
  readonly status: "first" | "kept" | "broken" | "unreadable";
  readonly hit_ratio: number | null;
  readonly lost_tokens: number;
  readonly lost_dollars: number | null;
  readonly difference: {
    readonly path: string;
    readonly reason: string;
    readonly before: string;
    readonly after: string;
  } | null;
}

/** What the verdict says, in words. */
function verdictLines(verdict: CacheVerdict): string[] {
  const hit =
    verdict.hit_ratio === null
      ? "hit ratio unknown"
      : `hit ratio ${(verdict.hit_ratio * 100).toFixed(1)} %`;
  const lost =
    verdict.lost_tokens > 0
      ? `, ${verdict.lost_tokens.toLocaleString("en")} tokens not read from the cache${verdict.lost_dollars === null ? "" : ` ($${verdict.lost_dollars.toFixed(6)})`}`
      : "";
  const lines = [
    verdict.status === "first"
      ? `first call of its chain: nothing cached before it (${hit})`
      : verdict.status === "kept"
        ? `prefix kept: the cache could hit (${hit}${lost})`
        : verdict.status === "unreadable"
          ? `a body could not be read as JSON (${hit})`
          : `prefix broken (${hit}${lost})`,
  ];
  const difference = verdict.difference;
  if (difference !== null) {
    lines.push(`first difference at ${difference.path}: ${difference.reason}`);
    lines.push(`before: ${difference.before}`, `after: ${difference.after}`);
  }
  return lines;
}

/** A recorded call's prompt-cache verdict, read when first opened. */
export function recordedCacheNode(read: RecordedBodyReader, path: string): HTMLElement {
  const box = element("div", { class: "recorded-body" });
  const node = element(
    "details",
    { class: "recorded-cache" },
    element("summary", {}, "prompt cache"),
    box,
  );
  let loaded = false;
  node.addEventListener("toggle", () => {
    if (!node.hasAttribute("open") || loaded) return;
    loaded = true;
    box.replaceChildren(element("div", { class: "note" }, "reading…"));
    read(path).then(
      ({ text }) => {
        const facts = JSON.parse(text) as { cache: CacheVerdict };
        box.replaceChildren(
          ...verdictLines(facts.cache).map((line) => element("div", { class: "verdict" }, line)),
        );
      },
      (error: unknown) => {
        loaded = false;
        box.replaceChildren(
          element("div", { class: "note error" }, `could not read it: ${String(error)}`),
        );
      },
    );
  });
  return node;
}

/** Pretty-printed JSON, or undefined for text that is not JSON (server-sent events, say). */
function prettyJson(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}

/**
 * One body of a recorded call, read when first opened: pretty-printed when it is JSON, and raw
 * as stored (the text the browser decoded from the stored bytes).
 */
export function recordedBodyNode(
  read: RecordedBodyReader,
  label: "request" | "response",
  path: string,
): HTMLElement {
  const box = element("div", { class: "recorded-body" });
  const node = element(
    "details",
    { class: `recorded-${label}` },
    element("summary", {}, label),
    box,
  );
  let loaded = false;
  node.addEventListener("toggle", () => {
    if (!node.hasAttribute("open") || loaded) return;
    loaded = true;
    box.replaceChildren(element("div", { class: "note" }, "reading…"));
    read(path).then(
      ({ text, contentType }) => {
        const pretty = prettyJson(text);
        box.replaceChildren(
          element(
            "div",
            { class: "note" },
            `${contentType || "no content type"}, ${text.length.toLocaleString("en")} characters`,
          ),
          ...(pretty === undefined
            ? []
            : [
                element("div", { class: "note" }, "pretty-printed:"),
                element("pre", { class: "pretty" }, pretty),
              ]),
          element("div", { class: "note" }, "raw, as recorded:"),
          element("pre", { class: "raw" }, text),
        );
      },
      (error: unknown) => {
        loaded = false;
        box.replaceChildren(
          element("div", { class: "note error" }, `could not read it: ${String(error)}`),
        );
      },
    );
  });
  return node;
}
