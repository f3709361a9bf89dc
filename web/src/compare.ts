import type { ChatMLMessage } from "../../packages/library/src/history/chatml.js";
import { allMessagePages, type ConsoleClient, type StoredMessage } from "./api.js";
import { projectedCount } from "./conversation-model.js";
import { element } from "./dom.js";

/**
 * One message in the three views side by side: the stored row, its ChatML projection and what
 * the model saw, each as JSON, with the lines that differ from the view on their left marked
 * (ids aliased, redactions, cut text).
 */
function lines(value: unknown): string[] {
  return JSON.stringify(value, null, 2).split("\n");
}

/** Marks each line of `right` that is not in the longest common subsequence with `left`. */
export function changedLines(left: readonly string[], right: readonly string[]): boolean[] {
  const rows = left.length;
  const columns = right.length;
  if (rows * columns > 4_000_000) return right.map((line, index) => line !== left[index]);
  const table: number[][] = Array.from({ length: rows + 1 }, () =>
    new Array<number>(columns + 1).fill(0),
  );
  for (let i = rows - 1; i >= 0; i--) {
    const row = table[i] as number[];
    const below = table[i + 1] as number[];
    for (let j = columns - 1; j >= 0; j--) {
      row[j] =
        left[i] === right[j] ? (below[j + 1] ?? 0) + 1 : Math.max(below[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const changed = right.map(() => true);
  let i = 0;
  let j = 0;
  while (i < rows && j < columns) {
    if (left[i] === right[j]) {
      changed[j] = false;
      i++;
      j++;
    } else if ((table[i + 1]?.[j] ?? 0) >= (table[i]?.[j + 1] ?? 0)) i++;
    else j++;
  }
  return changed;
}

function column(title: string, value: unknown, against: unknown): HTMLElement {
  const mine = lines(value);
  const marks = against === undefined ? mine.map(() => false) : changedLines(lines(against), mine);
  const pre = element("pre", {
    class: "compare-json",
    tabindex: "0",
    "aria-label": `${title} JSON`,
  });
  mine.forEach((line, index) => {
    pre.append(element("span", marks[index] === true ? { class: "changed" } : {}, `${line}\n`));
  });
  const count = marks.filter(Boolean).length;
  return element(
    "section",
    { class: "compare-column" },
    element(
      "h3",
      {},
      title,
      element(
        "span",
        { class: "muted" },
        against === undefined ? "" : ` · ${count} lines differ from the left`,
      ),
    ),
    pre,
  );
}

async function projectedOf(
  client: ConsoleClient,
  conversationId: string,
  message: StoredMessage,
  view: "chatml" | "model-visible",
  signal: AbortSignal,
): Promise<{ messages: ChatMLMessage[]; cut: boolean; redacted: boolean }> {
  const all: ChatMLMessage[] = [];
  let cut = false;
  let redacted = false;
  await allMessagePages(
    client,
    conversationId,
    { view, anchor: message.id },
    signal,
    ({ page }) => {
      all.push(...(page.messages as ChatMLMessage[]));
      cut ||= page.metadata.content_truncated;
      redacted ||= page.metadata.redacted === true;
    },
  );
  return { messages: all.slice(-projectedCount(message)), cut, redacted };
}

export async function compareNode(
  client: ConsoleClient,
  conversationId: string,
  message: StoredMessage,
  signal: AbortSignal,
): Promise<HTMLElement> {
  const [chatml, visible] = await Promise.all([
    projectedOf(client, conversationId, message, "chatml", signal),
    projectedOf(client, conversationId, message, "model-visible", signal),
  ]);
  const notes: string[] = [];
  if (chatml.cut || visible.cut) notes.push("the page size limit cut text in a projection");
  if (visible.redacted) notes.push("redacted");
  return element(
    "div",
    { class: "compare" },
    element(
      "p",
      { class: "note" },
      `Message ${message.id} in the three views. Lines marked differ from the view on their left${notes.length === 0 ? "" : ` (${notes.join("; ")})`}.`,
    ),
    element(
      "div",
      { class: "compare-grid" },
      column("stored", message, undefined),
      column("ChatML", chatml.messages, message),
      column("model-visible", visible.messages, chatml.messages),
    ),
  );
}

/** Opens the side-by-side panel for one message (replacing what it showed). */
export async function openComparePanel(
  panel: HTMLElement,
  client: ConsoleClient,
  conversationId: string,
  message: StoredMessage,
  signal: AbortSignal,
): Promise<void> {
  const close = element("button", { type: "button", class: "close" }, "close");
  close.addEventListener("click", () => {
    panel.hidden = true;
    panel.replaceChildren();
  });
  const title = element("h3", {}, "Views side by side");
  panel.hidden = false;
  panel.replaceChildren(title, close, element("p", {}, "loading…"));
  try {
    panel.replaceChildren(title, close, await compareNode(client, conversationId, message, signal));
  } catch (error) {
    panel.replaceChildren(title, close, element("p", { class: "error-text" }, String(error)));
  }
  panel.scrollIntoView({ block: "start" });
  close.focus();
}
