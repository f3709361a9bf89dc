import type { ChatMLMessage } from "../../packages/library/src/history/chatml.js";
import {
  allMessagePages,
  FULL_PAGE_BYTES,
  type ConsoleClient,
  type FetchedPage,
  type StoredMessage,
  type View,
} from "./api.js";
import { branchesNode } from "./branches.js";
import { cacheReportNode, loadCacheReport } from "./cache-report.js";
import { openComparePanel } from "./compare.js";
import { modelInputNode, totalsNode } from "./conversation-header.js";
import {
  ConversationModel,
  type Branch,
  projectedSources,
  searchableText,
} from "./conversation-model.js";
import { element } from "./dom.js";
import { possiblyCutMessages } from "./page-cut.js";
import { chatMLMessageNode, storedMessageNode, type MessageContext } from "./render-message.js";
import { VirtualList, type Row } from "./virtual-list.js";

/**
 * A conversation in one view: every page of its messages (each cursor followed, rows shown as
 * pages arrive, in a virtualised list), its branches with a picker, usage totals, find, the
 * side-by-side comparison of one message, and messages cut by the page limit loaded in full
 * on demand. Everything it does stops when its signal is aborted (a newer selection).
 */
export interface ConversationTarget {
  readonly id: string;
  readonly view: View;
  readonly anchor: string | undefined;
}

export interface ViewRow extends Row {
  readonly source: StoredMessage | undefined;
  text(): string;
}

type Message = StoredMessage | ChatMLMessage;

interface Holder {
  message: Message;
  readonly fetched: FetchedPage;
  readonly index: number;
}

export class ConversationView {
  readonly list: VirtualList;
  readonly rows: ViewRow[] = [];
  readonly sourceToKey = new Map<string, string>();
  private model = new ConversationModel([]);
  private readonly holders = new Map<Message, Holder>();
  private readonly possiblyCut = new Set<Message>();
  private readonly header: HTMLElement;
  private readonly count: HTMLElement;
  private readonly branchBox: HTMLElement;
  private readonly cacheBox = element("div", { class: "cache" });
  private readonly comparePanel: HTMLElement;
  private complete = false;
  private pending = 0;
  private stored: StoredMessage[] = [];
  private lastStoredPage: FetchedPage | undefined;
  private storedContext: MessageContext | undefined;
  private countTurn: (message: StoredMessage) => void = () => {};
  private readonly results = new Map<string, { messageId: string; isError: boolean }>();
  private readonly calls = new Map<string, { messageId: string; name: string }>();
  private onRowsAdded: () => void = () => {};

  constructor(
    private readonly client: ConsoleClient,
    readonly target: ConversationTarget,
    scroller: HTMLElement,
    private readonly signal: AbortSignal,
    private readonly linkFor: (messageId: string, anchor?: string) => string,
  ) {
    this.list = new VirtualList(scroller, { "aria-label": "messages" });
    this.count = element(
      "p",
      { class: "count", id: "detail-count", "aria-live": "polite" },
      "loading…",
    );
    this.header = element("div", { class: "totals" });
    this.branchBox = element("div", { class: "branches" });
    this.comparePanel = element("section", {
      class: "compare-panel",
      "aria-label": "views side by side",
      hidden: "",
    });
  }

  /** Where the prompt cache broke, for a conversation the gateway recorded (else nothing). */
  private async showCacheReport(): Promise<void> {
    try {
      const report = await loadCacheReport(this.client, this.target.id, this.signal);
      if (report !== undefined) this.cacheBox.replaceChildren(cacheReportNode(report, this.client));
    } catch {
      // The report is extra: the messages are shown whether or not it could be read.
    }
  }

  get node(): HTMLElement {
    return element(
      "div",
      {},
      element("h2", {}, `Conversation ${this.target.id}`),
      this.count,
      this.header,
      this.cacheBox,
      this.branchBox,
      this.comparePanel,
      this.list.node,
    );
  }

  whenRowsAdded(callback: () => void): void {
    this.onRowsAdded = callback;
  }

  private context(turnOf: Map<string, number>): MessageContext {
    const anchor = this.target.anchor;
    return {
      view: this.target.view,
      linkFor: (messageId) => this.linkFor(messageId, anchor),
      results: this.results,
      calls: this.calls,
      possiblyCut: this.possiblyCut,
      loadInFull: (message, button) => void this.loadInFull(message, button),
      compare: (messageId) => void this.compare(messageId),
      turnOf,
      imageOf: (messageId, block) =>
        this.client.imageBlob(this.target.id, messageId, block, this.signal),
      recordedBody: (path) => this.client.recordedBody(path, this.signal),
    };
  }

  /** Loads every page and shows rows as they arrive. Throws what the client throws. */
  async load(): Promise<void> {
    const { id, view, anchor } = this.target;
    void this.showCacheReport();
    const stored = this.stored;
    const turnOf = new Map<string, number>();
    let turns = 0;
    const countTurn = (message: StoredMessage) => {
      if (message.type === "user" || message.type === "summary") turnOf.set(message.id, ++turns);
    };
    this.countTurn = countTurn;
    const storedRows = view === "stored" && anchor === undefined;
    let context = this.context(turnOf);
    await allMessagePages(this.client, id, { view: "stored" }, this.signal, (fetched) => {
      this.lastStoredPage = fetched;
      const page = fetched.page.messages as StoredMessage[];
      stored.push(...page);
      this.pair(page);
      if (!storedRows) {
        this.count.textContent = `reading the stored messages (${stored.length.toLocaleString("en")} so far)…`;
        return;
      }
      for (const message of page) countTurn(message);
      this.model = new ConversationModel(stored);
      this.addPage(fetched, context, () => undefined);
      this.count.textContent = `${stored.length.toLocaleString("en")} messages shown; loading the rest…`;
    });
    this.model = new ConversationModel(stored);
    const branches = this.model.branches();
    if (storedRows) {
      this.storedContext = context;
      this.finish(stored.length, stored.length, branches.length);
      this.renderBranches(branches);
      this.renderTotals(stored);
      return;
    }
    // Other views: the rows come from their own pages; each projected message is tied to the
    // stored message it comes from (for turn headers, facts, links and the kept place).
    let sourceList: StoredMessage[] = stored;
    let effectiveAnchor = anchor;
    const pages: FetchedPage[] = [];
    await allMessagePages(this.client, id, { view, anchor }, this.signal, (fetched) => {
      pages.push(fetched);
      if (pages.length === 1) {
        effectiveAnchor = fetched.page.anchor ?? anchor;
        if (effectiveAnchor !== undefined && effectiveAnchor !== null)
          sourceList = this.model.contextOf(effectiveAnchor);
        for (const message of sourceList) countTurn(message);
        context = this.context(turnOf);
      }
    });
    const projected = pages.flatMap((fetched) => fetched.page.messages);
    const sources =
      view === "stored"
        ? (projected as StoredMessage[])
        : projectedSources(sourceList, projected.length);
    let offset = 0;
    for (const fetched of pages) {
      const start = offset;
      this.addPage(fetched, context, (index) => sources[start + index]);
      offset += fetched.page.messages.length;
    }
    this.finish(
      projected.length,
      stored.length,
      branches.length,
      effectiveAnchor ?? undefined,
      sourceList.length,
    );
    this.renderBranches(branches, effectiveAnchor ?? undefined);
    this.renderTotals(sourceList);
    const input = pages[0]?.page.model_input;
    if (view === "model-visible" && input !== undefined) {
      this.header.append(modelInputNode(input, (messageId) => this.linkFor(messageId, anchor)));
    }
  }

  private addPage(
    fetched: FetchedPage,
    context: MessageContext,
    sourceOf: (index: number) => StoredMessage | undefined,
    from = 0,
  ): void {
    const messages = fetched.page.messages.slice(from);
    if (fetched.page.metadata.content_truncated)
      for (const one of possiblyCutMessages(messages)) this.possiblyCut.add(one);
    const added: ViewRow[] = [];
    messages.forEach((message, index) => {
      const holder: Holder = { message, fetched, index: from + index };
      this.holders.set(message, holder);
      const source = this.target.view === "stored" ? (message as StoredMessage) : sourceOf(index);
      const key = `row:${this.rows.length + added.length}`;
      if (source !== undefined && !this.sourceToKey.has(source.id))
        this.sourceToKey.set(source.id, key);
      const previous =
        this.rows.length + added.length > 0
          ? (added[added.length - 1] ?? this.rows[this.rows.length - 1])?.source
          : undefined;
      let cachedText: string | undefined;
      added.push({
        key,
        source,
        text: () => (cachedText ??= searchableText(holder.message)),
        build: () => {
          const node =
            this.target.view === "stored"
              ? storedMessageNode(holder.message as StoredMessage, context, previous)
              : chatMLMessageNode(holder.message as ChatMLMessage, context, source, key);
          node.setAttribute("data-row", key);
          return node;
        },
      });
    });
    if (this.rows.length === 0 && added.length > 0) performance.mark("verbatim:first-rows");
    this.rows.push(...added);
    this.list.append(added);
    this.onRowsAdded();
  }

  private pair(messages: readonly StoredMessage[]): void {
    for (const message of messages) {
      for (const block of message.content) {
        if (block.type === "toolResult" && typeof block["callID"] === "string") {
          this.results.set(block["callID"], {
            messageId: message.id,
            isError: block["isError"] === true,
          });
        } else if (block.type === "toolCall" && typeof block["id"] === "string") {
          this.calls.set(block["id"], { messageId: message.id, name: String(block["name"] ?? "") });
        }
      }
    }
  }

  private finish(
    shown: number,
    stored: number,
    branchCount: number,
    anchor?: string,
    contextLength?: number,
  ): void {
    this.complete = true;
    performance.mark("verbatim:all-rows");
    const what =
      this.target.view === "stored" && anchor === undefined
        ? "messages"
        : `${this.target.view} messages`;
    let text = `${shown.toLocaleString("en")} ${what} shown`;
    if (anchor === undefined)
      text += ` (all ${stored.toLocaleString("en")} stored messages${branchCount > 1 ? `, all ${branchCount} branches in the order written` : ""})`;
    else
      text += ` from ${(contextLength ?? shown).toLocaleString("en")} of the ${stored.toLocaleString("en")} stored messages: the context of ${anchor} (its chain back to the start or the last compression summary)`;
    if (this.possiblyCut.size > 0)
      text += `; ${this.possiblyCut.size} may be cut by the page size limit (marked)`;
    this.count.textContent = text;
  }

  get loaded(): boolean {
    return this.complete;
  }

  private renderBranches(branches: readonly Branch[], anchor?: string): void {
    this.branchBox.replaceChildren(
      branchesNode(
        this.model,
        branches,
        {
          shown: anchor,
          picked: this.target.anchor !== undefined,
          allLabel:
            this.target.view === "model-visible"
              ? "the newest message's branch"
              : "all branches, in the order written",
        },
        {
          branch: (leaf) => this.linkFor("", leaf),
          message: (messageId) => this.linkFor(messageId, this.target.anchor),
          navigate: (address) =>
            document.dispatchEvent(new CustomEvent("console:navigate", { detail: address })),
        },
      ),
    );
  }

  private renderTotals(messages: readonly StoredMessage[]): void {
    this.header.replaceChildren(totalsNode(messages));
  }

  /**
   * Live: asks for the last page of stored messages again (with `waitMs`, the server answers
   * only once it holds more messages or the time has passed: long polling); messages written
   * since are shown at once in the stored view, and announced with a "show them" button in the
   * others. Returns how many new messages there are.
   */
  async poll(waitMs = 0): Promise<number> {
    const last = this.lastStoredPage;
    if (!this.complete || last === undefined) return 0;
    const known = last.page.messages.length;
    let fetched: FetchedPage = {
      page: await this.client.messages(
        this.target.id,
        { view: "stored", cursor: last.cursor, waitForMoreThan: known, waitMs },
        this.signal,
      ),
      cursor: last.cursor,
    };
    let from = known;
    let added = 0;
    for (;;) {
      const fresh = fetched.page.messages.slice(from) as StoredMessage[];
      if (fresh.length > 0) {
        added += fresh.length;
        this.lastStoredPage = fetched;
        this.stored.push(...fresh);
        this.pair(fresh);
        if (this.storedContext !== undefined) {
          for (const message of fresh) this.countTurn(message);
          this.addPage(fetched, this.storedContext, () => undefined, from);
        }
      }
      const next = fetched.page.next_cursor;
      if (next === null) break;
      fetched = {
        page: await this.client.messages(
          this.target.id,
          { view: "stored", cursor: next },
          this.signal,
        ),
        cursor: next,
      };
      from = 0;
    }
    if (added === 0) return 0;
    this.model = new ConversationModel(this.stored);
    const branches = this.model.branches();
    if (this.storedContext !== undefined) {
      this.finish(this.stored.length, this.stored.length, branches.length);
      this.renderBranches(branches);
      this.renderTotals(this.stored);
      return added;
    }
    this.pending += added;
    const show = element("button", { type: "button" }, "show them");
    show.addEventListener("click", () =>
      document.dispatchEvent(new CustomEvent("console:reload-detail")),
    );
    this.count.replaceChildren(
      `${this.pending.toLocaleString("en")} new stored messages since this view was loaded. `,
      show,
    );
    return added;
  }

  private async loadInFull(message: Message, button: HTMLButtonElement): Promise<void> {
    const holder = this.holders.get(message);
    if (holder === undefined) return;
    button.disabled = true;
    button.textContent = "loading…";
    try {
      const page = await this.client.messages(
        this.target.id,
        {
          view: this.target.view,
          anchor: holder.fetched.page.anchor ?? this.target.anchor,
          cursor: holder.fetched.cursor,
          limit: holder.index + 1,
          pageLimitBytes: FULL_PAGE_BYTES,
        },
        this.signal,
      );
      const full = page.messages[holder.index];
      if (full === undefined) throw new Error("the message is no longer on its page");
      const same = JSON.stringify(full) === JSON.stringify(holder.message);
      this.possiblyCut.delete(holder.message);
      holder.message = full;
      this.holders.set(full, holder);
      const article = button.closest("article");
      const row = this.rows.find((one) => one.key === article?.getAttribute("data-row"));
      if (article !== null && row !== undefined) {
        const fresh = row.build();
        fresh.prepend(
          element(
            "div",
            { class: "note", role: "note" },
            same
              ? "Loaded in full: the page limit had not cut this message."
              : page.metadata.content_truncated
                ? "Loaded with the largest page the server gives; still cut."
                : "Loaded in full.",
          ),
        );
        article.replaceWith(fresh);
        fresh.focus();
      }
    } catch (error) {
      button.disabled = false;
      button.textContent = `load in full (failed: ${error instanceof Error ? error.message : String(error)})`;
    }
  }

  private async compare(messageId: string): Promise<void> {
    const message = this.model.byId.get(messageId);
    if (message === undefined) return;
    await openComparePanel(this.comparePanel, this.client, this.target.id, message, this.signal);
  }
}
