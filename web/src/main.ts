import { ConsoleClient, type View } from "./api.js";
import { element, renderJob, renderMessages } from "./render.js";

/**
 * The operator console: lists conversations and jobs and shows a conversation's messages or a
 * job's trajectory in the three views. It talks to the console routes over HTTP only.
 */
type Tab = "conversations" | "jobs";

const byId = <T extends HTMLElement>(id: string): T => {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`#${id} is missing`);
  return node as T;
};

const tokenInput = byId<HTMLInputElement>("token");
const status = byId("status");
const list = byId<HTMLUListElement>("list");
const more = byId<HTMLButtonElement>("more");
const content = byId("content");
const subjectFilter = byId<HTMLInputElement>("subject-filter");

const state: {
  client: ConsoleClient | undefined;
  tab: Tab;
  selected: string | undefined;
  cursor: string | null;
} = { client: undefined, tab: "conversations", selected: undefined, cursor: null };

function currentView(): View {
  const checked = document.querySelector<HTMLInputElement>('input[name="view"]:checked');
  return (checked?.value ?? "stored") as View;
}

function showError(error: unknown): void {
  status.textContent = error instanceof Error ? error.message : String(error);
  status.className = "error";
}

async function loadList(append: boolean): Promise<void> {
  const client = state.client;
  if (client === undefined) return;
  if (!append) {
    list.replaceChildren();
    state.cursor = null;
  }
  const cursor = append ? (state.cursor ?? undefined) : undefined;
  const subject = subjectFilter.value.trim();
  try {
    if (state.tab === "conversations") {
      const page = await client.conversations(subject, cursor);
      for (const conversation of page.data) {
        list.append(
          listItem(
            conversation.id,
            `${conversation.subject_uid} · ${conversation.message_count} messages · ${conversation.created_at}`,
          ),
        );
      }
      state.cursor = page.next_cursor;
    } else {
      const page = await client.jobs(subject, cursor);
      for (const job of page.data) {
        list.append(listItem(job.id, `${job.subject_uid} · ${job.status} · ${job.created_at}`));
      }
      state.cursor = page.next_cursor;
    }
    more.hidden = state.cursor === null;
    if (list.childElementCount === 0) {
      list.append(element("li", { class: "empty" }, `No ${state.tab} yet.`));
    }
    status.textContent = "connected";
    status.className = "";
  } catch (error) {
    showError(error);
  }
}

function listItem(id: string, meta: string): HTMLElement {
  const item = element(
    "li",
    { "data-id": id },
    element("div", { class: "id" }, id),
    element("div", { class: "meta" }, meta),
  );
  item.addEventListener("click", () => {
    for (const other of list.querySelectorAll("li.selected")) other.classList.remove("selected");
    item.classList.add("selected");
    state.selected = id;
    void loadDetail();
  });
  return item;
}

async function loadDetail(): Promise<void> {
  const client = state.client;
  const id = state.selected;
  if (client === undefined || id === undefined) return;
  try {
    const node =
      state.tab === "conversations"
        ? renderMessages(await client.messages(id, currentView()))
        : renderJob(await client.job(id, currentView()));
    content.replaceChildren(node);
  } catch (error) {
    content.replaceChildren(element("p", { class: "error" }, String(error)));
  }
}

function selectTab(tab: Tab): void {
  state.tab = tab;
  state.selected = undefined;
  byId("tab-conversations").setAttribute("aria-selected", String(tab === "conversations"));
  byId("tab-jobs").setAttribute("aria-selected", String(tab === "jobs"));
  content.replaceChildren(element("p", { class: "empty" }, "Pick a conversation or a job."));
  void loadList(false);
}

function connect(token: string): void {
  if (token === "") return;
  sessionStorage.setItem("verbatim.operatorToken", token);
  state.client = new ConsoleClient(token);
  void loadList(false);
}

byId("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  connect(tokenInput.value.trim());
});
byId("tab-conversations").addEventListener("click", () => selectTab("conversations"));
byId("tab-jobs").addEventListener("click", () => selectTab("jobs"));
more.addEventListener("click", () => void loadList(true));
subjectFilter.addEventListener("change", () => void loadList(false));
for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="view"]')) {
  radio.addEventListener("change", () => void loadDetail());
}

// A token in the URL fragment (#token=…, as `npm start` prints it) connects at once and is
// then removed from the address bar; it never reaches the server in a URL.
const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromHash !== null) history.replaceState(null, "", location.pathname);
const saved = fromHash ?? sessionStorage.getItem("verbatim.operatorToken") ?? "";
tokenInput.value = saved;
connect(saved);
