import { element } from "./dom.js";

/** Reads a recorded call's body (ConsoleClient.recordedBody). */
export type RecordedBodyReader = (
  path: string,
) => Promise<{ readonly text: string; readonly contentType: string }>;

/** The console's links to a recorded call's bodies (GET /ai-gateway/recorded-calls/:id/…). */
export function recordedCallLinks(callId: string): { request: string; response: string } {
  const base = `/ai-gateway/recorded-calls/${encodeURIComponent(callId)}`;
  return { request: `${base}/request`, response: `${base}/response` };
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
