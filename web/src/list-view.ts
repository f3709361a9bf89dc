import type { ConsoleClient, ConversationSummary, JobSummary } from "./api.js";
import { element } from "./dom.js";
import { formatRoute, type Route } from "./route.js";

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
      if (this.route.section === "conversations") {
        const page = await this.client.conversations(
          { ...(this.route.subject === undefined ? {} : { subject: this.route.subject }) },
          cursor,
          this.signal,
        );
        for (const conversation of page.data) this.list.append(this.conversationItem(conversation));
        this.shown += page.data.length;
        this.cursor = page.next_cursor;
      } else {
        const page = await this.client.jobs(
          {
            ...(this.route.subject === undefined ? {} : { subject: this.route.subject }),
            ...(this.route.status === undefined ? {} : { status: this.route.status }),
          },
          cursor,
          this.signal,
        );
        for (const job of page.data) this.list.append(this.jobItem(job));
        this.shown += page.data.length;
        this.cursor = page.next_cursor;
      }
      this.more.hidden = this.cursor === null;
      this.count.textContent =
        this.shown === 0
          ? `No ${this.route.section} ${this.route.subject === undefined ? "yet" : "match the filter"}.`
          : `${this.shown.toLocaleString("en")} ${this.shown === 1 ? this.route.section.slice(0, -1) : this.route.section} shown${this.cursor === null ? " (all)" : "; more exist (they load as you scroll)"}`;
      this.markSelected(this.route.id);
      this.onSuccess();
    } catch (error) {
      if (!this.signal.aborted) this.onError(error);
    } finally {
      this.loading = false;
    }
  }

  markSelected(id: string | undefined): void {
    for (const item of this.list.querySelectorAll("li[data-id]")) {
      const selected = item.getAttribute("data-id") === id;
      item.classList.toggle("selected", selected);
      const link = item.querySelector("a");
      if (selected) link?.setAttribute("aria-current", "true");
      else link?.removeAttribute("aria-current");
    }
  }

  private link(id: string): string {
    return formatRoute({ ...this.route, id, target: undefined, anchor: undefined });
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
