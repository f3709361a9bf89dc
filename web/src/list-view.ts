import type {
  ConsoleClient,
  ConversationSummary,
  JobSummary,
  ListFilter,
  SearchHit,
} from "./api.js";
import { element } from "./dom.js";
import { FILTER_KEYS, formatRoute, type Route } from "./route.js";

/**
 * The list of conversations or jobs: every page followed (the next one loads when the end of
 * the list comes into view, or with "load more"), the count of what is shown and whether more
 * exist, and the selected entry marked. Each entry is a link to its deep-link address.
 */
export class ListView {
  private cursor: string | null = null;
  private shown = 0;
  private loading = false;
  private readonly observer: IntersectionObserver;

  constructor(
    private readonly client: ConsoleClient,
    private readonly route: Route,
    private readonly list: HTMLUListElement,
    private readonly more: HTMLButtonElement,
    private readonly count: HTMLElement,
    private readonly signal: AbortSignal,
    private readonly onError: (error: unknown) => void,
    private readonly onSuccess: () => void,
  ) {
    this.observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting) && this.cursor !== null) void this.next();
      },
      { root: list.parentElement, rootMargin: "400px 0px" },
    );
    this.observer.observe(more);
    signal.addEventListener("abort", () => this.observer.disconnect());
  }

  async start(): Promise<void> {
    this.list.replaceChildren();
    this.shown = 0;
    this.cursor = null;
    this.count.textContent = "loading…";
    await this.next(true);
  }

  async next(first = false): Promise<void> {
    if (this.loading || (!first && this.cursor === null)) return;
    this.loading = true;
    const cursor = first ? undefined : (this.cursor ?? undefined);
    try {
      const filter: ListFilter = this.route;
      const filtered = FILTER_KEYS.some((key) => this.route[key] !== undefined);
      let noun: string = this.route.section;
      if (this.route.q !== undefined) {
        noun = "matches";
        const page = await this.client.search(this.route.q, cursor, this.signal);
        for (const hit of page.data) this.list.append(this.hitItem(hit));
        this.shown += page.data.length;
        this.cursor = page.next_cursor;
      } else if (this.route.section === "conversations") {
        const page = await this.client.conversations(filter, cursor, this.signal);
        for (const conversation of page.data) this.list.append(this.conversationItem(conversation));
        this.shown += page.data.length;
        this.cursor = page.next_cursor;
      } else {
        const page = await this.client.jobs(filter, cursor, this.signal);
        for (const job of page.data) this.list.append(this.jobItem(job));
        this.shown += page.data.length;
        this.cursor = page.next_cursor;
      }
      this.more.hidden = this.cursor === null;
      this.count.textContent =
        this.shown === 0
          ? this.route.q !== undefined
            ? `Nothing matches “${this.route.q}”.`
            : `No ${this.route.section} ${filtered ? "match the filter" : "yet"}.`
          : `${this.shown.toLocaleString("en")} ${this.shown === 1 ? noun.replace(/e?s$/, "") : noun} shown${this.cursor === null ? " (all)" : "; more exist (they load as you scroll)"}`;
      this.markSelected(this.route.id, this.route.target);
      this.onSuccess();
    } catch (error) {
      if (!this.signal.aborted) this.onError(error);
    } finally {
      this.loading = false;
    }
  }

  /** Marks the entry of the selection (for search results: the matching message or item). */
  markSelected(id: string | undefined, target?: string): void {
    for (const item of this.list.querySelectorAll("li[data-id]")) {
      const hit = item.getAttribute("data-hit");
      const selected = item.getAttribute("data-id") === id && (hit === null || hit === target);
      item.classList.toggle("selected", selected);
      const link = item.querySelector("a");
      if (selected) link?.setAttribute("aria-current", "true");
      else link?.removeAttribute("aria-current");
    }
  }

  private link(id: string): string {
    return formatRoute({ ...this.route, id, target: undefined, anchor: undefined, q: undefined });
  }

  private conversationItem(conversation: ConversationSummary): HTMLElement {
    return element(
      "li",
      { "data-id": conversation.id },
      element(
        "a",
        { href: this.link(conversation.id) },
        element("span", { class: "id" }, conversation.id),
        element(
          "span",
          { class: "meta" },
          `${conversation.subject_uid} · ${conversation.message_count.toLocaleString("en")} messages · ${conversation.last_message_at ?? conversation.created_at}`,
        ),
      ),
    );
  }

  private hitItem(hit: SearchHit): HTMLElement {
    const message = hit.kind === "message";
    const href = message
      ? formatRoute({
          section: "conversations",
          id: hit.conversation_id ?? "",
          target: hit.message_id ?? undefined,
          view: this.route.view,
          q: this.route.q,
        })
      : formatRoute({
          section: "jobs",
          id: hit.job_id ?? "",
          target: hit.item_key ?? undefined,
          view: this.route.view,
          q: this.route.q,
        });
    return element(
      "li",
      {
        "data-id": (message ? hit.conversation_id : hit.job_id) ?? "",
        "data-hit": (message ? hit.message_id : hit.item_key) ?? "",
      },
      element(
        "a",
        { href },
        element(
          "span",
          { class: "id" },
          message ? `message ${hit.message_id}` : `item ${hit.item_key} of ${hit.job_id}`,
        ),
        element("span", { class: "snippet" }, hit.snippet),
        element("span", { class: "meta" }, `${hit.subject_uid} · ${hit.created_at}`),
      ),
    );
  }

  private jobItem(job: JobSummary): HTMLElement {
    return element(
      "li",
      { "data-id": job.id },
      element(
        "a",
        { href: this.link(job.id) },
        element("span", { class: "id" }, job.id),
        element(
          "span",
          { class: "meta" },
          `${job.subject_uid} · ${job.status} · ${job.created_at}`,
        ),
      ),
    );
  }
}
