import type { JobUsage } from "./job-usage.js";
import type { ChatMLMessage } from "../../packages/library/src/history/chatml.js";

/** The console routes' replies, as docs/openapi.json describes them. */
export type View = "stored" | "chatml" | "model-visible";
export const VIEWS: readonly View[] = ["stored", "chatml", "model-visible"];

export interface ConversationSummary {
  readonly id: string;
  readonly subject_uid: string;
  readonly created_at: string;
  readonly message_count: number;
  readonly last_message_at?: string | null;
}

export interface JobSummary {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string | null;
  readonly status: string;
  readonly created_at: string;
}

export interface ListPage<T> {
  readonly data: readonly T[];
  readonly next_cursor: string | null;
}

export interface UsageFacts {
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly reportedCost?: number;
}

export interface GatewayFacts {
  readonly model?: string;
  readonly provider?: string;
  readonly usage?: UsageFacts;
  readonly stopReason?: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly compression?: {
    readonly throughMessageId: string;
    readonly fromMessageId: string;
    readonly messageCount: number;
    readonly source: string;
  };
  /** Images a recorded call named by URL (not fetched), by the index of their block. */
  readonly imageUrls?: Readonly<Record<string, string>>;
  /** The recorded pass-through call this answer came from. */
  readonly recordedCallId?: string;
  /** An imported history's first message: the source's calls whose answers are not in it. */
  readonly callsOutsideHistory?: CallsOutsideHistory;
}

/**
 * Model calls of an imported conversation that end no message of its history (compacted or
 * condensed away by the source, or never kept): how many, their tokens, their cost.
 */
export interface CallsOutsideHistory {
  readonly calls: number;
  readonly usage: UsageFacts;
  readonly dollars: number;
  readonly reported: number;
  readonly estimated: number;
  readonly unknown: number;
}

export type StoredBlock = { readonly type: string } & Readonly<Record<string, unknown>>;

export interface StoredMessage {
  readonly id: string;
  readonly type: string;
  readonly role: string;
  readonly status: string;
  readonly previous_message_id: string | null;
  readonly content: readonly StoredBlock[];
  readonly metadata: {
    readonly caller?: Readonly<Record<string, string>>;
    readonly gateway?: GatewayFacts;
  };
  readonly depth?: number;
  readonly created_at: string;
  readonly updated_at?: string;
  /** The model call's cost, when the server could tell (reported, or estimated from prices). */
  readonly cost?: MessageCost;
}

export type MessageCost =
  | { readonly kind: "reported" | "estimated"; readonly dollars: number }
  | { readonly kind: "unknown" | "notBilled" };

export interface ProjectionMetadata {
  readonly redacted?: boolean;
  readonly content_truncated: boolean;
}

export interface MessagesPage {
  readonly view: View;
  readonly conversation_id: string;
  readonly subject_uid?: string;
  readonly anchor?: string | null;
  readonly messages: readonly (StoredMessage | ChatMLMessage)[];
  readonly metadata: ProjectionMetadata;
  readonly next_cursor: string | null;
  /**
   * view=model-visible: the instructions and tools of the request that produced the newest
   * response of the context (null when none was recorded).
   */
  readonly model_input?: ModelInput | null;
}

export interface ModelInput {
  readonly message_id: string;
  readonly instructions: string | null;
  readonly tools: readonly Readonly<Record<string, unknown>>[];
  readonly max_output_tokens: number | null;
}

export type JobItem = { readonly type: string } & Readonly<Record<string, unknown>>;

export interface StoredItemRow {
  readonly position: number;
  readonly revision: number;
  readonly item_key: string;
  readonly item: JobItem;
}

export interface JobTurn {
  readonly id: string;
  readonly turn_index: number;
  readonly attempt?: number;
  readonly revision: number;
  readonly status: string;
  readonly item_count?: number;
  readonly created_at?: string;
  readonly updated_at?: string;
  /** The sum of the usage the turn's items carry, null when none does. */
  readonly usage?: JobUsage | null;
  readonly trajectory: {
    readonly view: View;
    readonly items?: readonly StoredItemRow[];
    readonly messages?: readonly ChatMLMessage[];
    readonly metadata: ProjectionMetadata;
  };
}

export interface JobDetail {
  /** Changes whenever the job or its turns do (long polling: `wait.change`). */
  readonly change_mark: string;
  readonly job: JobSummary & Readonly<Record<string, unknown>>;
  /** The source's run totals (per model) and the sum over the items' per-call usage. */
  readonly usage?: {
    readonly reported: readonly JobUsage[] | null;
    readonly calls: JobUsage | null;
  };
  readonly turns: readonly JobTurn[];
}

/** What the lists can be narrowed to (docs/server/console.md, "Console"). */
export interface ListFilter {
  readonly subject?: string | undefined;
  readonly model?: string | undefined;
  readonly status?: string | undefined;
  /** YYYY-MM-DD: created on or after this day (UTC). */
  readonly from?: string | undefined;
  /** YYYY-MM-DD: created on or before this day (UTC). */
  readonly to?: string | undefined;
}

export interface SearchHit {
  readonly kind: "message" | "item";
  readonly conversation_id: string | null;
  readonly message_id: string | null;
  readonly job_id: string | null;
  readonly turn_id: string | null;
  readonly item_key: string | null;
  readonly subject_uid: string;
  readonly created_at: string;
  readonly snippet: string;
}

function dayAfter(day: string): string {
  const date = new Date(`${day}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString();
}

function filterQuery(filter: ListFilter): Record<string, string | undefined> {
  return {
    subject_prefix: filter.subject,
    model: filter.model,
    created_after:
      filter.from === undefined
        ? undefined
        : new Date(`${filter.from}T00:00:00.000Z`).toISOString(),
    created_before: filter.to === undefined ? undefined : dayAfter(filter.to),
  };
}

/** The largest page the server cuts nothing of below (docs/server/console.md, "Page size"). */
export const FULL_PAGE_BYTES = 16 * 1024 * 1024;

/** Why a request failed: the server could not be reached, or it answered with an error. */
export class RequestError extends Error {
  constructor(
    message: string,
    readonly kind: "network" | "unauthorized" | "http",
    readonly status: number,
  ) {
    super(message);
  }
}

export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

export class ConsoleClient {
  constructor(private readonly token: string) {}

  private async get<T>(
    path: string,
    query: Record<string, string | undefined>,
    signal?: AbortSignal,
  ): Promise<T> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== "") search.set(key, value);
    }
    const url = search.size === 0 ? path : `${path}?${search.toString()}`;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${this.token}` },
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new RequestError(`the server does not answer (${String(error)})`, "network", 0);
    }
    let body: { error?: { message: string; code: string } };
    try {
      body = (await response.json()) as typeof body;
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new RequestError(
        `the server answered ${response.status} without JSON`,
        "http",
        response.status,
      );
    }
    if (!response.ok) {
      throw new RequestError(
        `${body.error?.code ?? response.status}: ${body.error?.message ?? ""}`,
        response.status === 401 ? "unauthorized" : "http",
        response.status,
      );
    }
    return body as T;
  }

  /** The bytes of an image block of a stored message (the thumbnails), as a Blob. */
  async imageBlob(
    conversationId: string,
    messageId: string,
    block: number,
    signal?: AbortSignal,
  ): Promise<Blob> {
    const path = `/ai-gateway/conversations/${encodeURIComponent(conversationId)}/messages/${encodeURIComponent(messageId)}/blocks/${block}/image`;
    const response = await fetch(path, {
      headers: { authorization: `Bearer ${this.token}` },
      ...(signal === undefined ? {} : { signal }),
    });
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as {
        error?: { message: string; code: string };
      };
      throw new RequestError(
        `${body.error?.code ?? response.status}: ${body.error?.message ?? ""}`,
        response.status === 401 ? "unauthorized" : "http",
        response.status,
      );
    }
    return response.blob();
  }

  /**
   * A recorded call's request or response body as text (GET /ai-gateway/recorded-calls/:id/…;
   * the browser undoes a content encoding), with its content type.
   */
  async recordedBody(
    path: string,
    signal?: AbortSignal,
  ): Promise<{ readonly text: string; readonly contentType: string }> {
    const response = await fetch(path, {
      headers: { authorization: `Bearer ${this.token}` },
      ...(signal === undefined ? {} : { signal }),
    });
    if (!response.ok) {
      const body = (await response.json().catch(() => ({}))) as {
        error?: { message: string; code: string };
      };
      throw new RequestError(
        `${body.error?.code ?? response.status}: ${body.error?.message ?? ""}`,
        response.status === 401 ? "unauthorized" : "http",
        response.status,
      );
    }
    return { text: await response.text(), contentType: response.headers.get("content-type") ?? "" };
  }

  /** Any console route's JSON reply (for routes the page reads as they are). */
  raw<T>(path: string, signal: AbortSignal): Promise<T> {
    return this.get(path, {}, signal);
  }

  conversations(
    filter: ListFilter,
    cursor: string | undefined,
    signal: AbortSignal,
  ): Promise<ListPage<ConversationSummary>> {
    return this.get(
      "/ai-gateway/conversations",
      { ...filterQuery(filter), cursor, limit: "100" },
      signal,
    );
  }

  jobs(
    filter: ListFilter,
    cursor: string | undefined,
    signal: AbortSignal,
  ): Promise<ListPage<JobSummary>> {
    return this.get(
      "/background-agent-jobs",
      { ...filterQuery(filter), status: filter.status, cursor, limit: "100" },
      signal,
    );
  }

  search(
    query: string,
    cursor: string | undefined,
    signal: AbortSignal,
  ): Promise<ListPage<SearchHit>> {
    return this.get("/ai-gateway/search", { q: query, cursor, limit: "100" }, signal);
  }

  messages(
    id: string,
    options: {
      view: View;
      anchor?: string | undefined;
      cursor?: string | undefined;
      limit?: number;
      pageLimitBytes?: number;
      /** Long polling: answer once the page holds more than this many messages… */
      waitForMoreThan?: number;
      /** …or after this many milliseconds. */
      waitMs?: number;
    },
    signal: AbortSignal,
  ): Promise<MessagesPage> {
    return this.get(
      `/ai-gateway/conversations/${encodeURIComponent(id)}/messages`,
      {
        view: options.view,
        anchor: options.anchor,
        cursor: options.cursor,
        limit: String(options.limit ?? 1000),
        page_limit_bytes:
          options.pageLimitBytes === undefined ? undefined : String(options.pageLimitBytes),
        wait_for_more_than:
          options.waitForMoreThan === undefined ? undefined : String(options.waitForMoreThan),
        wait_ms: options.waitMs === undefined ? undefined : String(options.waitMs),
      },
      signal,
    );
  }

  /** A job; with `wait`, the server answers once its change mark differs (or after waitMs). */
  job(
    id: string,
    view: View,
    signal: AbortSignal,
    pageLimitBytes?: number,
    wait?: { readonly change: string; readonly waitMs: number },
  ): Promise<JobDetail> {
    return this.get(
      `/background-agent-jobs/${encodeURIComponent(id)}`,
      {
        view,
        page_limit_bytes: pageLimitBytes === undefined ? undefined : String(pageLimitBytes),
        wait_for_change: wait?.change,
        wait_ms: wait === undefined ? undefined : String(wait.waitMs),
      },
      signal,
    );
  }
}

/** A page of messages together with the cursor it was asked for (to ask for it again in full). */
export interface FetchedPage {
  readonly page: MessagesPage;
  readonly cursor: string | undefined;
}

/**
 * Every page of a conversation's messages in one view, following each cursor to the end;
 * `onPage` runs after each page so that the first messages are shown while the rest load.
 */
export async function allMessagePages(
  client: ConsoleClient,
  id: string,
  options: { view: View; anchor?: string | undefined },
  signal: AbortSignal,
  onPage: (fetched: FetchedPage) => void,
): Promise<void> {
  let cursor: string | undefined;
  for (;;) {
    const page = await client.messages(id, { ...options, cursor }, signal);
    onPage({ page, cursor });
    if (page.next_cursor === null) return;
    cursor = page.next_cursor;
  }
}
