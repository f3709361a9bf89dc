import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/database.js";
import { findJobOwner, listJobsForConsole } from "../../store/repositories/console-jobs.js";
import {
  conversationOwner,
  countMessages,
  instant,
  latestMessageId,
  listConversations,
  startsWith,
  type ConversationSummaryRow,
} from "../../store/repositories/console-queries.js";
import { GatewayImageStore } from "../conversations/images.js";
import type { GatewayMessageStore } from "../conversations/message-store.js";
import {
  callCacheVerdict,
  conversationCacheReport,
  type ConversationCacheReport,
} from "../recording/cache-report.js";
import {
  readRecordedCall,
  type CallCacheVerdict,
  recordedCallFacts,
  recordedRequest,
  recordedResponse,
  type RecordedBody,
  type RecordedCallFacts,
} from "../recording/call-bytes.js";
import { BodyReadCache } from "../recording/bodies/read-cache.js";
import { decodeCursor, decodeKeyCursor, encodeKeyCursor } from "./cursor.js";
import { readConsoleImage, type ConsoleImage, type ImageRequest } from "./images.js";
import { changeMarkOf } from "./job-page.js";
import type { ConsoleView } from "./project-in-slices.js";
import { searchMessagesAndItems, type SearchPage, type SearchQuery } from "./search.js";
import { waitForNews, type LongPoll } from "./wait.js";
import { openConsolePages, type ConsolePages, type ConsoleWorkerOptions } from "./worker/pages.js";

/** The narrowing and page of a console list (docs/server/console.md, "Console"). */
export interface ConsoleListQuery {
  readonly subjectUid?: string | undefined;
  /** Subjects starting with this text (`%` and `_` are plain characters). */
  readonly subjectPrefix?: string | undefined;
  /** Created at or after this instant (ISO 8601). */
  readonly createdAfter?: string | undefined;
  /** Created before this instant (ISO 8601). */
  readonly createdBefore?: string | undefined;
  readonly limit: number;
  /** next_cursor of the previous page; none for the first. */
  readonly cursor?: string | undefined;
}

export interface ConversationListQuery extends ConsoleListQuery {
  /** Only conversations with a message answered by this model. */
  readonly model?: string | undefined;
}

export interface JobListQuery extends ConsoleListQuery {
  readonly status?: string | undefined;
  readonly conversationId?: string | undefined;
}

/** A page of a console list, as the console answers it. */
export interface ConsoleList<Entry> {
  readonly data: Entry[];
  readonly next_cursor: string | null;
}

/** A job as the console lists it. */
export interface ConsoleJobSummary {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string;
  readonly status: string;
  readonly attempts: number;
  readonly retry_budget: number;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A page of a conversation's messages, as the console route asks for it. */
export interface ConversationPageQuery {
  readonly conversationId: string;
  readonly view: ConsoleView;
  /**
   * The message whose model-visible context is shown; none: every message in the order
   * written (view=model-visible: the context of the newest message).
   */
  readonly anchor?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly pageLimitBytes: number;
  /** Long polling (without anchor): answer once the page holds more than `forMoreThan` messages. */
  readonly wait?: (LongPoll & { readonly forMoreThan: number }) | undefined;
}

/** A job's page, as the console route asks for it. */
export interface JobPageQuery {
  readonly jobId: string;
  readonly view: ConsoleView;
  readonly pageLimitBytes: number;
  /** Long polling: answer once the job's change mark differs from `forChange`. */
  readonly wait?: (LongPoll & { readonly forChange: string }) | undefined;
}

export interface ConsoleServiceOptions {
  /** The message store (and so the message cache) the server's other routes read through. */
  readonly store: GatewayMessageStore;
  /**
   * Build the message and job pages in a worker thread on a read-only connection of its own
   * (console/worker/pages.ts); `false` builds them on the event loop.
   */
  readonly worker: ConsoleWorkerOptions | false;
}

function conversationNotFound(id: string): VerbatimError {
  return new VerbatimError("resource_not_found", `no conversation ${id}`, {
    where: id,
    hint: "List conversations with GET /ai-gateway/conversations",
  });
}

/** A list page's cursor: the key (`created_at`, `id`) of the previous page's last row. */
function listKey(cursor: string | undefined): readonly [string, string] | undefined {
  const key = decodeKeyCursor(cursor, 2);
  return key === undefined ? undefined : [key[0] as string, key[1] as string];
}

/** The next page's cursor when a row beyond the page was read (`rows` holds `limit` + 1). */
function nextListCursor(
  rows: readonly { readonly created_at: string; readonly id: string }[],
  limit: number,
): string | null {
  const last = rows[limit - 1];
  return rows.length > limit && last !== undefined
    ? encodeKeyCursor([last.created_at, last.id])
    : null;
}

/**
 * The operator console's reads (B14, docs/console.md): conversations and their messages in the
 * three views, jobs and their trajectories, search, cache reports and stored images, across
 * every subject. The message and job pages are built in the console's worker thread when there
 * is one (`pages`), else on the event loop in slices; `close()` ends the thread.
 */
export class ConsoleService {
  readonly #database: StoreDatabase;
  readonly #store: GatewayMessageStore;
  readonly #images: GatewayImageStore;
  /** The recorded requests read lately: reading one again, or the next of its session, is quick. */
  readonly #recordedReads = new BodyReadCache();
  /** Where the message and job pages are built (the worker thread's host and counters). */
  readonly pages: ConsolePages;

  constructor(database: StoreDatabase, options: ConsoleServiceOptions) {
    this.#database = database;
    this.#store = options.store;
    this.#images = new GatewayImageStore(database);
    this.pages = openConsolePages(database, options.store, options.worker);
  }

  /** Conversations, newest first (optionally of one subject, prefix, model or time range). */
  async listConversations(
    query: ConversationListQuery,
  ): Promise<ConsoleList<ConversationSummaryRow>> {
    const { limit, createdAfter, createdBefore } = query;
    const rows = await listConversations(this.#database, {
      subjectUid: query.subjectUid,
      subjectPrefix: query.subjectPrefix,
      model: query.model,
      createdAfter: createdAfter === undefined ? undefined : instant(createdAfter),
      createdBefore: createdBefore === undefined ? undefined : instant(createdBefore),
      limit: limit + 1,
      after: listKey(query.cursor),
    });
    return { data: rows.slice(0, limit), next_cursor: nextListCursor(rows, limit) };
  }

  /**
   * The JSON reply (UTF-8) of a page of a conversation's messages: stored, ChatML or
   * model-visible, cut to the page size limit (built in the worker thread when there is one).
   */
  async conversationPage(query: ConversationPageQuery): Promise<Buffer> {
    const { conversationId: id, view, limit, wait } = query;
    const database = this.#database;
    // The operator gives the id alone: its owner first, and every read after names it.
    const subject = await conversationOwner(database, id);
    if (subject === undefined) throw conversationNotFound(id);
    let anchor = query.anchor ?? null;
    if (anchor === null && view === "model-visible")
      anchor = (await latestMessageId(database, subject, id)) ?? null;
    const offset = decodeCursor(query.cursor);
    if (anchor === null && wait !== undefined && wait.ms > 0) {
      const count = offset + wait.forMoreThan;
      await waitForNews(async () => (await countMessages(database, subject, id)) > count, wait);
    }
    return this.pages.conversationPage({
      conversationId: id,
      subject,
      view,
      anchor,
      offset,
      limit,
      pageLimitBytes: query.pageLimitBytes,
    });
  }

  /** Background agent jobs, newest first (optionally of one subject, status or conversation). */
  async listJobs(query: JobListQuery): Promise<ConsoleList<ConsoleJobSummary>> {
    const { limit, subjectPrefix, createdAfter, createdBefore } = query;
    const rows = await listJobsForConsole(this.#database.db, {
      subjectUid: query.subjectUid,
      subjectLikePattern: subjectPrefix === undefined ? undefined : startsWith(subjectPrefix),
      createdAfter: createdAfter === undefined ? undefined : instant(createdAfter),
      createdBefore: createdBefore === undefined ? undefined : instant(createdBefore),
      status: query.status,
      conversationId: query.conversationId,
      limit: limit + 1,
      after: listKey(query.cursor),
    });
    return {
      data: rows.slice(0, limit).map((row) => ({
        ...row,
        attempts: Number(row.attempts),
        retry_budget: Number(row.retry_budget),
      })),
      next_cursor: nextListCursor(rows, limit),
    };
  }

  /**
   * The JSON reply (UTF-8) of a job's page: its change mark, the job, and each turn's
   * trajectory in one of the three views (built in the worker thread when there is one).
   */
  async jobPage(query: JobPageQuery): Promise<Buffer> {
    const { jobId: id, wait } = query;
    const database = this.#database;
    const owner = await findJobOwner(database.db, id);
    if (owner === undefined) {
      throw new VerbatimError("resource_not_found", `no job ${id}`, {
        where: id,
        hint: "List jobs with GET /background-agent-jobs",
      });
    }
    if (wait !== undefined && wait.ms > 0) {
      await waitForNews(
        async () => (await changeMarkOf(database, owner, id)) !== wait.forChange,
        wait,
      );
    }
    return this.pages.jobPage({
      jobId: id,
      owner,
      view: query.view,
      pageLimitBytes: query.pageLimitBytes,
    });
  }

  /** Full-text search across conversations' messages and jobs' items, newest first, paged. */
  search(query: SearchQuery): Promise<SearchPage> {
    return searchMessagesAndItems(this.#database, query);
  }

  /**
   * A recorded conversation's calls with their usage and whether each kept the cacheable prefix
   * of the previous call of its chain (docs/server/recorded-calls.md, "Cache report").
   */
  async cacheReport(conversationId: string): Promise<ConversationCacheReport> {
    const report = await conversationCacheReport(this.#database, conversationId);
    if (report === undefined) {
      throw new VerbatimError(
        "resource_not_found",
        `no recorded calls in conversation ${conversationId}`,
        {
          where: conversationId,
          hint: "Only conversations recorded through /v1/messages or /v1/chat/completions have a cache report",
        },
      );
    }
    return report;
  }

  /** A recorded call's facts (GET /ai-gateway/recorded-calls/:id). */
  async recordedCall(id: string): Promise<RecordedCallFacts & { cache: CallCacheVerdict }> {
    const row = await readRecordedCall(this.#database, id);
    return { ...recordedCallFacts(row), cache: await callCacheVerdict(this.#database, row) };
  }

  /** A recorded call's request or response, byte for byte as sent and as received. */
  async recordedCallBody(id: string, which: "request" | "response"): Promise<RecordedBody> {
    const row = await readRecordedCall(this.#database, id);
    return which === "request"
      ? recordedRequest(this.#database, row, this.#recordedReads)
      : recordedResponse(this.#database, row);
  }

  /** The bytes of an image block of a stored message (the console's thumbnails). */
  image(request: ImageRequest): Promise<ConsoleImage> {
    return readConsoleImage(this.#database, this.#store, this.#images, request);
  }

  /** Starts the worker thread, if any, and has it open the store (when the server listens). */
  warm(): void {
    this.pages.warm();
  }

  /** Waits for the pages in flight and ends the worker thread, if any. */
  close(): Promise<void> {
    return this.pages.close();
  }
}
