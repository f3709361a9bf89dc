import { ConsoleClient, isAbort, type View } from "./api.js";
import { Connection } from "./connection.js";
import { ConversationView } from "./conversation-view.js";
import { element } from "./dom.js";
import { ListView } from "./list-view.js";
import { showJob } from "./job-view.js";
import { findNext, installKeys, type SearchableRow } from "./keys.js";
import { FILTER_KEYS, formatRoute, parseRoute, type Route } from "./route.js";
import type { Row, VirtualList } from "./virtual-list.js";

/**
 * The operator console: deep-linked routes (history API), the list of conversations or jobs,
 * and the selected one in a view. A selection's requests are aborted and its replies ignored
 * once a newer selection is made, so a slow reply never replaces what is selected now.
 */
const byId = <T extends HTMLElement>(id: string): T => {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`#${id} is missing`);
  return node as T;
};

const tokenInput = byId<HTMLInputElement>("token");
const list = byId<HTMLUListElement>("list");
const more = byId<HTMLButtonElement>("more");
const listCount = byId("list-count");
const content = byId("content");
const subjectFilter = byId<HTMLInputElement>("subject-filter");
const statusFilter = byId<HTMLSelectElement>("status-filter");
const modelFilter = byId<HTMLInputElement>("model-filter");
const fromFilter = byId<HTMLInputElement>("from-filter");
const toFilter = byId<HTMLInputElement>("to-filter");
const searchInput = byId<HTMLInputElement>("search");
const findInput = byId<HTMLInputElement>("find");
const findCount = byId("find-count");
const connection = new Connection(byId("status"), byId<HTMLButtonElement>("retry"), () => reload());

let client: ConsoleClient | undefined;
let route: Route = parseRoute(location);
let listController: AbortController | undefined;
let detailController: AbortController | undefined;
let listView: ListView | undefined;
let conversation: ConversationView | undefined;
let jobList: { list: VirtualList; rows: Row[] } | undefined;
let findAt = -1;

function linkFor(messageId: string, anchor?: string): string {
  return formatRoute({
    ...route,
    section: "conversations",
    target: messageId === "" ? undefined : messageId,
    anchor,
  });
}

function navigate(url: string, replace = false): void {
  const next = parseRoute(new URL(url, location.origin));
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  apply(next);
}

function failed(error: unknown): void {
  if (isAbort(error)) return;
  connection.failed(error);
}

/** After a failed request, the next try waits this long. */
const RETRY_MS = 3000;

/** Live updates of a conversation or a job: one held request at a time (the server answers on news). */
const LONG_POLL_MS = 25_000;
async function longPoll(signal: AbortSignal, poll: () => Promise<number>): Promise<void> {
  while (!signal.aborted) {
    try {
      await poll();
      connection.succeeded();
    } catch (error) {
      if (signal.aborted || isAbort(error)) return;
      failed(error);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

function loadList(): void {
  listController?.abort();
  if (client === undefined) return;
  listController = new AbortController();
  listView = new ListView(client, route, list, more, listCount, listController.signal, failed, () =>
    connection.succeeded(),
  );
  void listView.start();
}

/** The stored message nearest the top of the pane (kept when the view changes). */
function place(): string | undefined {
  return conversation?.list.firstVisibleKey(content, "data-source");
}

function reveal(target: string | undefined, focus: boolean): boolean {
  if (target === undefined) return false;
  let node: HTMLElement | undefined;
  if (conversation !== undefined) {
    const key = conversation.sourceToKey.get(target);
    if (key !== undefined)
      node = conversation.list.reveal(key, (one) => `[data-row="${CSS.escape(one)}"]`);
  } else if (jobList !== undefined) {
    node = jobList.list.reveal(`item:${target}`, () => `[data-item-key="${CSS.escape(target)}"]`);
  }
  if (node === undefined) return false;
  node.scrollIntoView({ block: "start" });
  node.classList.add("targeted");
  if (focus) node.focus({ preventScroll: true });
  return true;
}

function loadDetail(keepPlace: string | undefined): void {
  detailController?.abort();
  conversation?.list.disconnect();
  jobList?.list.disconnect();
  conversation = undefined;
  jobList = undefined;
  findAt = -1;
  findCount.textContent = "";
  document.body.classList.toggle("has-selection", route.id !== undefined);
  if (client === undefined || route.id === undefined) {
    content.replaceChildren(element("p", { class: "empty" }, "Pick a conversation or a job."));
    return;
  }
  const controller = new AbortController();
  detailController = controller;
  const current = route;
  const target = current.target ?? keepPlace;
  const back = element(
    "a",
    {
      href: formatRoute({ ...current, id: undefined, target: undefined, anchor: undefined }),
      class: "back",
    },
    `← all ${current.section}`,
  );
  if (current.section === "conversations") {
    const view = new ConversationView(
      client,
      { id: current.id ?? "", view: current.view, anchor: current.anchor },
      content,
      controller.signal,
      linkFor,
    );
    conversation = view;
    content.replaceChildren(back, view.node);
    let revealed = false;
    view.whenRowsAdded(() => {
      if (controller.signal.aborted) return;
      connection.succeeded();
      if (!revealed) revealed = reveal(target, current.target !== undefined);
    });
    view.load().then(
      () => {
        if (!controller.signal.aborted)
          void longPoll(controller.signal, () => view.poll(LONG_POLL_MS));
        if (!controller.signal.aborted && !revealed)
          revealed = reveal(target, current.target !== undefined);
        if (!controller.signal.aborted && current.target !== undefined && !revealed) {
          content.prepend(
            element(
              "p",
              { class: "error-text", role: "alert" },
              `No message ${current.target} in this view of the conversation.`,
            ),
          );
        }
      },
      (error: unknown) => {
        if (controller.signal.aborted || isAbort(error)) return;
        failed(error);
        content.replaceChildren(
          back,
          element(
            "p",
            { class: "error-text", role: "alert" },
            String(error instanceof Error ? error.message : error),
          ),
        );
      },
    );
    return;
  }
  content.replaceChildren(back, element("p", { class: "count" }, "loading…"));
  client.job(current.id ?? "", current.view, controller.signal).then(
    (detail) => {
      if (controller.signal.aborted) return;
      connection.succeeded();
      jobList = showJob(detail, current, content, back);
      // Live: one held request at a time while the job can still change; the server answers
      // when the job's change mark moves (a status, a turn, new items).
      let mark = detail.change_mark;
      let status = detail.job.status;
      void longPoll(controller.signal, async () => {
        if (status !== "queued" && status !== "running") {
          await new Promise<void>((resolve) =>
            controller.signal.addEventListener("abort", () => resolve(), { once: true }),
          );
          return 0;
        }
        const fresh = await client?.job(
          current.id ?? "",
          current.view,
          controller.signal,
          undefined,
          {
            change: mark,
            waitMs: LONG_POLL_MS,
          },
        );
        if (fresh === undefined || controller.signal.aborted) return 0;
        status = fresh.job.status;
        if (fresh.change_mark === mark) return 0;
        mark = fresh.change_mark;
        const top = content.scrollTop;
        jobList?.list.disconnect();
        jobList = showJob(fresh, current, content, back);
        content.scrollTop = top;
        return 1;
      });
      if (!reveal(target, current.target !== undefined) && current.target !== undefined) {
        content.prepend(
          element(
            "p",
            { class: "error-text", role: "alert" },
            `No item ${current.target} in this job.`,
          ),
        );
      }
    },
    (error: unknown) => {
      if (controller.signal.aborted || isAbort(error)) return;
      failed(error);
      content.replaceChildren(
        back,
        element(
          "p",
          { class: "error-text", role: "alert" },
          String(error instanceof Error ? error.message : error),
        ),
      );
    },
  );
}

function syncControls(): void {
  byId("tab-conversations").setAttribute("aria-current", String(route.section === "conversations"));
  byId("tab-jobs").setAttribute("aria-current", String(route.section === "jobs"));
  byId("tab-conversations").setAttribute(
    "href",
    formatRoute({ section: "conversations", view: route.view }),
  );
  byId("tab-jobs").setAttribute("href", formatRoute({ section: "jobs", view: route.view }));
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="view"]'))
    radio.checked = radio.value === route.view;
  subjectFilter.value = route.subject ?? "";
  statusFilter.value = route.status ?? "";
  modelFilter.value = route.model ?? "";
  fromFilter.value = route.from ?? "";
  toFilter.value = route.to ?? "";
  searchInput.value = route.q ?? "";
  byId("status-box").hidden = route.section !== "jobs";
  byId("model-box").hidden = route.section === "jobs";
  const filtered = [route.subject, route.model, route.from, route.to, route.status].some(
    (one) => one !== undefined,
  );
  if (filtered) byId<HTMLDetailsElement>("filter-box").open = true;
  document.body.classList.toggle("has-selection", route.id !== undefined);
}

function apply(next: Route): void {
  const previous = route;
  route = next;
  syncControls();
  const listChanged =
    listView === undefined ||
    previous.section !== next.section ||
    FILTER_KEYS.some((key) => previous[key] !== next[key]);
  if (listChanged) loadList();
  else listView?.markSelected(next.id, next.target);
  const detailChanged =
    previous.section !== next.section ||
    previous.id !== next.id ||
    previous.view !== next.view ||
    previous.anchor !== next.anchor ||
    (conversation === undefined && jobList === undefined);
  if (detailChanged) {
    const keep = previous.id === next.id && previous.section === next.section ? place() : undefined;
    loadDetail(keep);
  } else if (next.target !== undefined && next.target !== previous.target) {
    reveal(next.target, true);
  }
}

function reload(): void {
  listView = undefined;
  conversation = undefined;
  jobList = undefined;
  apply(route);
}

function connect(token: string): void {
  if (token === "") {
    connection.failed(new Error("enter the operator token"));
    return;
  }
  sessionStorage.setItem("verbatim.operatorToken", token);
  client = new ConsoleClient(token);
  connection.connecting();
  reload();
}

/** Find within the conversation or job: every loaded row is searched, not only those built. */
function find(step: 1 | -1): void {
  const rows: readonly SearchableRow[] =
    conversation?.rows ??
    jobList?.rows.map((row) => ({
      key: row.key,
      text: () => (row.build().textContent ?? "").toLowerCase(),
    })) ??
    [];
  const owner = conversation?.list ?? jobList?.list;
  findAt = findNext({
    rows,
    needle: findInput.value,
    step,
    from: findAt,
    list: owner,
    content,
    count: findCount,
  });
}

installKeys(content, list);
document.addEventListener("click", (event) => {
  if (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  const link = event.target instanceof Element ? event.target.closest("a") : null;
  if (link === null || link.target !== "" || link.origin !== location.origin) return;
  if (!/^\/(conversations|jobs)(\/|$)/.test(link.pathname)) return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});
document.addEventListener("console:navigate", (event) =>
  navigate((event as CustomEvent<string>).detail),
);
document.addEventListener("console:reload-detail", () => loadDetail(place()));
window.addEventListener("popstate", () => apply(parseRoute(location)));
byId("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  connect(tokenInput.value.trim());
});
const value = (input: HTMLInputElement | HTMLSelectElement) => input.value.trim() || undefined;
byId("filters").addEventListener("submit", (event) => {
  event.preventDefault();
  navigate(
    formatRoute({
      section: route.section,
      view: route.view,
      subject: value(subjectFilter),
      model: route.section === "jobs" ? undefined : value(modelFilter),
      from: value(fromFilter),
      to: value(toFilter),
      status: route.section === "jobs" ? value(statusFilter) : undefined,
    }),
  );
});
byId("clear-filters").addEventListener("click", () =>
  navigate(formatRoute({ section: route.section, view: route.view })),
);
byId("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  navigate(formatRoute({ section: route.section, view: route.view, q: value(searchInput) }));
});
more.addEventListener("click", () => void listView?.next());
for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="view"]')) {
  radio.addEventListener("change", () =>
    navigate(formatRoute({ ...route, view: radio.value as View, target: undefined })),
  );
}
byId("find-form").addEventListener("submit", (event) => {
  event.preventDefault();
  find(1);
});
byId("find-previous").addEventListener("click", () => find(-1));

// A token in the URL fragment (#token=…, as `npm start` prints it) connects at once and is
// then removed from the address bar; it never reaches the server in a URL.
const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromHash !== null) history.replaceState(null, "", location.pathname + location.search);
const saved = fromHash ?? sessionStorage.getItem("verbatim.operatorToken") ?? "";
tokenInput.value = saved;
syncControls();
connect(saved);
