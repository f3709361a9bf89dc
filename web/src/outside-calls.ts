import type { CallsOutsideHistory } from "./api.js";
import { element } from "./dom.js";

const number = (value: number): string => value.toLocaleString("en");

/**
 * On an imported history's first message: the source's model calls whose answers are not in the
 * history (condensed or compacted away, or never kept), with their tokens and cost, so that the
 * conversation's usage is all shown even though no message of the history ends those calls.
 */
export function outsideCallsNode(outside: CallsOutsideHistory): HTMLElement {
  const { calls, usage } = outside;
  const how = [
    outside.reported > 0 ? `${outside.reported} reported` : "",
    outside.estimated > 0 ? `${outside.estimated} estimated` : "",
    outside.unknown > 0 ? `${outside.unknown} not priced` : "",
  ].filter((part) => part !== "");
  return element(
    "div",
    { class: "facts outside-calls" },
    `${number(calls)} model call${calls === 1 ? "" : "s"} whose answers are not in this history (condensed or compacted away by the source, or never kept) · tokens in ${number(usage.input ?? 0)}, cache read ${number(usage.cacheRead ?? 0)}, cache write ${number(usage.cacheWrite ?? 0)}, out ${number(usage.output ?? 0)}`,
    outside.reported + outside.estimated > 0
      ? ` · $${outside.dollars.toFixed(6)} (${how.join(", ")})`
      : " · cost unknown",
  );
}
