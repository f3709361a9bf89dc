import type { VirtualList } from "./virtual-list.js";

/**
 * Keyboard and find: arrow keys (or j/k) walk the rows of the pane, arrow keys walk the list,
 * and find goes from match to match over every loaded row (built or not).
 */
export interface SearchableRow {
  readonly key: string;
  text(): string;
}

function moveFocus(content: HTMLElement, step: 1 | -1): void {
  const active = document.activeElement;
  const articles = [...content.querySelectorAll<HTMLElement>("[data-row]")];
  if (articles.length === 0) return;
  const currentRow =
    active instanceof HTMLElement ? active.closest<HTMLElement>("[data-row]") : null;
  const index = currentRow === null ? -1 : articles.indexOf(currentRow);
  const top = content.getBoundingClientRect().top;
  const next =
    index === -1
      ? articles.find((one) => one.getBoundingClientRect().bottom > top)
      : articles[index + step];
  if (next === undefined) return;
  next.tabIndex = -1;
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

export function installKeys(content: HTMLElement, list: HTMLElement): void {
  content.addEventListener("keydown", (event) => {
    const target = event.target;
    if (
      target instanceof HTMLInputElement ||
      target instanceof HTMLSelectElement ||
      target instanceof HTMLTextAreaElement
    ) {
      return;
    }
    if (event.key === "ArrowDown" || event.key === "j") {
      event.preventDefault();
      moveFocus(content, 1);
    } else if (event.key === "ArrowUp" || event.key === "k") {
      event.preventDefault();
      moveFocus(content, -1);
    }
  });
  list.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const links = [...list.querySelectorAll<HTMLAnchorElement>("li[data-id] a")];
    const index = links.indexOf(document.activeElement as HTMLAnchorElement);
    const next = links[index + (event.key === "ArrowDown" ? 1 : -1)];
    if (next !== undefined) {
      event.preventDefault();
      next.focus();
    }
  });
}

/** Shows the next (or previous) match after row `from`; returns the row shown (or `from`). */
export function findNext(options: {
  readonly rows: readonly SearchableRow[];
  readonly needle: string;
  readonly step: 1 | -1;
  readonly from: number;
  readonly list: VirtualList | undefined;
  readonly content: HTMLElement;
  readonly count: HTMLElement;
}): number {
  const { rows, step, from, count } = options;
  const needle = options.needle.trim().toLowerCase();
  if (needle === "" || rows.length === 0) {
    count.textContent = "";
    return from;
  }
  const matches = rows.flatMap((row, index) => (row.text().includes(needle) ? [index] : []));
  if (matches.length === 0) {
    count.textContent = "no match";
    return from;
  }
  let position =
    step === 1
      ? matches.findIndex((index) => index > from)
      : matches.findLastIndex((index) => index < from);
  if (position === -1) position = step === 1 ? 0 : matches.length - 1;
  const at = matches[position] ?? 0;
  count.textContent = `match ${position + 1} of ${matches.length}`;
  const key = rows[at]?.key ?? "";
  const node = options.list?.reveal(key, (one) => `[data-row="${CSS.escape(one)}"]`);
  if (node !== undefined) {
    for (const old of options.content.querySelectorAll(".found")) old.classList.remove("found");
    node.classList.add("found");
    node.scrollIntoView({ block: "center" });
  }
  return at;
}
