import type { JobDetail } from "./api.js";
import { element } from "./dom.js";
import { usageText } from "./job-usage.js";
import { jobRows } from "./render-job.js";
import { formatRoute, type Route } from "./route.js";
import { VirtualList, type Row } from "./virtual-list.js";

/**
 * A job in the pane: its status and counts, its record, and every turn's items (or projected
 * messages) in a virtualised list whose rows carry their key for find and keyboard walks.
 */
export function showJob(
  detail: JobDetail,
  current: Route,
  content: HTMLElement,
  back: HTMLElement,
): { list: VirtualList; rows: Row[] } {
  const { rows, itemCount } = jobRows(detail, (key) => formatRoute({ ...current, target: key }));
  const virtual = new VirtualList(content, { "aria-label": "turns and items" });
  const messageCount = detail.turns.reduce(
    (sum, turn) => sum + (turn.trajectory.messages?.length ?? 0),
    0,
  );
  const counted =
    current.view === "stored"
      ? `${itemCount.toLocaleString("en")} items`
      : `${messageCount.toLocaleString("en")} ${current.view} messages`;
  content.replaceChildren(
    back,
    element("h2", {}, `Job ${detail.job.id}`),
    element(
      "p",
      { class: "count", id: "detail-count" },
      `${detail.job.status} · ${detail.turns.length} turns · ${counted} (all shown) · subject ${detail.job.subject_uid} · conversation `,
      element(
        "a",
        {
          href: formatRoute({
            section: "conversations",
            id: String(detail.job.conversation_id),
            view: current.view,
          }),
        },
        String(detail.job.conversation_id),
      ),
    ),
    usageSummary(detail),
    element(
      "details",
      {},
      element("summary", {}, "job record (JSON)"),
      element("pre", { class: "json" }, JSON.stringify(detail.job, null, 2)),
    ),
    virtual.node,
  );
  const keyed = rows.map((row) => ({
    key: row.key,
    build: () => {
      const node = row.build();
      node.setAttribute("data-row", row.key);
      return node;
    },
  }));
  virtual.append(keyed);
  return { list: virtual, rows: keyed };
}

/** The job's usage: the totals its source recorded, and the sum of its items' model calls. */
function usageSummary(detail: JobDetail): HTMLElement {
  const reported = detail.usage?.reported ?? [];
  const calls = detail.usage?.calls ?? null;
  if (reported.length === 0 && calls === null)
    return element("p", { class: "muted", id: "job-usage" }, "No model usage stored for this job.");
  return element(
    "div",
    { class: "facts usage", id: "job-usage" },
    ...reported.map((usage) => element("p", {}, `Run totals (source): ${usageText(usage)}`)),
    calls === null ? "" : element("p", {}, `Model calls (sum over items): ${usageText(calls)}`),
  );
}
