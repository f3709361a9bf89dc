import type { ModelInput, StoredMessage } from "./api.js";
import { usageTotals } from "./conversation-model.js";
import { element, longText } from "./dom.js";

/**
 * Above a conversation's messages: the usage and cost totals of the model calls shown, and in
 * model-visible what the model received besides the messages (instructions and tools).
 */
export function totalsNode(messages: readonly StoredMessage[]): HTMLElement {
  const totals = usageTotals(messages);
  if (totals.calls === 0) {
    return element("p", { class: "muted" }, "No model usage stored for these messages.");
  }
  const number = (value: number) => value.toLocaleString("en");
  const parts = [
    totals.reported > 0 ? `${totals.reported} reported by the provider` : "",
    totals.estimated > 0 ? `${totals.estimated} estimated from prices` : "",
    totals.unknown > 0 ? `${totals.unknown} not priced, left out` : "",
  ].filter((part) => part !== "");
  return element(
    "p",
    {},
    `${number(totals.calls)} model calls${totals.outside > 0 ? ` (${number(totals.outside)} whose answers are no longer in the history: condensed or compacted away)` : ""} · tokens in ${number(totals.input)}, cache read ${number(totals.cacheRead)}, cache write ${number(totals.cacheWrite)}, out ${number(totals.output)}`,
    totals.reported + totals.estimated > 0
      ? ` · $${totals.dollars.toFixed(4)} (${parts.join(", ")})`
      : " · cost not known",
  );
}

/** What the model received besides the messages: the instructions and the tools. */
export function modelInputNode(
  input: ModelInput | null,
  linkFor: (messageId: string) => string,
): HTMLElement {
  if (input === null) {
    return element(
      "p",
      { class: "note" },
      "No instructions or tools were recorded for the newest response of this context.",
    );
  }
  const tools = element("ul", { class: "tools" });
  for (const tool of input.tools) {
    const name =
      typeof tool["name"] === "string"
        ? tool["name"]
        : ((tool["function"] as { name?: string } | undefined)?.name ?? "(unnamed)");
    tools.append(
      element(
        "li",
        {},
        element(
          "details",
          {},
          element("summary", {}, String(name)),
          longText(JSON.stringify(tool), { json: true }),
        ),
      ),
    );
  }
  return element(
    "section",
    { class: "model-input", "aria-label": "instructions and tools the model received" },
    element("h3", {}, "Besides the messages, the model received"),
    element(
      "p",
      { class: "note" },
      "From the request of ",
      element(
        "a",
        { href: linkFor(input.message_id), "data-jump": input.message_id },
        input.message_id,
      ),
      input.max_output_tokens === null
        ? ""
        : ` (at most ${input.max_output_tokens.toLocaleString("en")} output tokens)`,
      ":",
    ),
    input.instructions === null
      ? element("p", { class: "muted" }, "no instructions")
      : element(
          "details",
          { open: "" },
          element("summary", {}, "instructions"),
          longText(input.instructions),
        ),
    input.tools.length === 0
      ? element("p", { class: "muted" }, "no tools")
      : element(
          "details",
          {},
          element(
            "summary",
            {},
            `${input.tools.length} tool${input.tools.length === 1 ? "" : "s"}`,
          ),
          tools,
        ),
  );
}
