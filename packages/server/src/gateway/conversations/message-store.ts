import type { StoreDatabase } from "../../store/database.js";
import {
  findConversation,
  insertConversation,
} from "../../store/repositories/gateway-conversations.js";
import { newId } from "../ids.js";
import {
  findMessageRow,
  findMessageRows,
  listContinuationIds,
  listConversationRows,
  type MessageRow,
} from "../../store/repositories/gateway-messages.js";
import { inTransaction } from "../../store/transaction.js";
import { appendChain, appendWithinTransaction, type AppendPlan } from "./append.js";
import {
  prepareAppend,
  type AppendInput,
  type AppendMessageInput,
  type PreparedAppend,
} from "./prepare-append.js";
import { requestFingerprint, type IdempotentOperation } from "./idempotency.js";
import type {
  CallerMetadata,
  FinalStatus,
  GatewayConversation,
  GatewayFacts,
  GatewayMessage,
  RequestSettings,
} from "./message-types.js";
import type { Block } from "verbatim-llm/history";
import { MessageMemory } from "./message-memory.js";
import { finishMessage } from "./message-finish.js";
import { findAnchorFacts, readChain, readMessagesById } from "./message-reads.js";
import { conversationNotFound, messageNotFound } from "./not-found.js";
import {
  conversationFromRow,
  messageFromRow,
  messageFromWrittenRow,
  requestSettingsFromRow,
} from "./rows.js";
import {
  DEFAULT_GATEWAY_LIMITS,
  idSchema,
  parseOrThrow,
  subjectSchema,
  type GatewayLimits,
} from "../validation/checks.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import { finalStatusSchema, parseBlocks } from "../validation/content.js";
import { parseGatewayFacts } from "../validation/gateway-facts.js";
import { z } from "zod";
import type { Kysely } from "kysely";
import type { StoreSchema } from "../../store/schema.js";

export type { AppendInput, AppendMessageInput, PreparedAppend } from "./prepare-append.js";

export interface FinishInput {
  readonly status: FinalStatus;
  /** The final content; the content written at start is kept when absent. */
  readonly content?: readonly Block[];
  /** Facts known at the end (usage, provider response id), merged over those given at start. */
  readonly gateway?: GatewayFacts;
}

/**
 * A prepared append's messages, each in_progress one with its lease's end from `now` and the
 * holder that renews it.
 */
function withLeases(prepared: PreparedAppend, now: Date): PreparedAppend["messages"] {
  return prepared.messages.map((message, index) => {
    const lease = prepared.leases[index];
    return lease === undefined
      ? message
      : {
          ...message,
          leaseExpiresAt: new Date(now.getTime() + lease.milliseconds).toISOString(),
          ...(lease.holder === undefined ? {} : { leaseHolder: lease.holder }),
        };
  });
}

/** Where a matched write continues (`appendPreparedMatching`). */
export interface MatchedAnchor {
  /** The message to continue, or null to start a chain. */
  readonly previousMessageId: string | null;
  /** The conversation of the anchor (or of a new chain in it); a new one when absent. */
  readonly conversationId?: string;
  /** Leading messages of the write that are stored already: they are not written again. */
  readonly storedMessages: number;
  /** How far the matched anchor goes, in the matcher's own units. */
  readonly coveredUnits?: number;
}

/** Decides, inside the write's transaction, where a write continues (gateway/message-chains). */
export interface AppendMatcher {
  match(transaction: Kysely<StoreSchema>): Promise<MatchedAnchor>;
  /** Called in the same transaction with the messages the write stored (the skipped left out). */
  written(
    transaction: Kysely<StoreSchema>,
    anchor: MatchedAnchor,
    conversationId: string,
    stored: readonly GatewayMessage[],
  ): Promise<void>;
}

/** The model-visible context of an anchor: its chain from the start or the last summary. */
export interface MessageContext {
  readonly anchor: GatewayMessage;
  /** Oldest first; the last one is the anchor. */
  readonly messages: readonly GatewayMessage[];
}

export interface GatewayMessageStoreOptions {
  readonly limits?: Partial<GatewayLimits>;
  /**
   * Bytes of parsed final messages kept in memory for context reads (default 64 MiB; 0 turns
   * the cache off). A final message never changes, so the cache is safe with several
   * processes on one database.
   */
  readonly cacheBytes?: number;
  /** The clock (tests). */
  readonly now?: () => Date;
}

const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The gateway's conversation message store (SPEC B1, B3–B6, B13) over one database: chains of
 * messages with forks, their lifecycle, their context, scoped to one subject per call.
 */
export class GatewayMessageStore {
  readonly database: StoreDatabase;
  readonly limits: GatewayLimits;
  readonly #now: () => Date;
  readonly #memory: MessageMemory;

  constructor(database: StoreDatabase, options: GatewayMessageStoreOptions = {}) {
    this.database = database;
    this.limits = { ...DEFAULT_GATEWAY_LIMITS, ...options.limits };
    this.#now = options.now ?? (() => new Date());
    this.#memory = new MessageMemory(options.cacheBytes ?? DEFAULT_CACHE_BYTES);
  }

  /** What the message cache holds now (messages and counted bytes). */
  cacheStats(): { readonly messages: number; readonly bytes: number } {
    return this.#memory.stats();
  }

  now(): string {
    return this.#now().toISOString();
  }

  /** Creates an empty conversation; its first chain starts with an append without anchor. */
  async createConversation(
    subjectUid: string,
    input: { readonly metadata?: CallerMetadata } = {},
  ): Promise<GatewayConversation> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    const row = {
      id: newId("conv"),
      subject_uid: subject,
      created_at: this.now(),
      metadata: JSON.stringify(checkCallerMetadata(input.metadata, "metadata")),
    };
    await insertConversation(this.database.db, row);
    return conversationFromRow(row);
  }

  /** Appends messages as a chain continuing `previousMessageId` (B4). */
  async appendMessages(subjectUid: string, input: AppendInput): Promise<GatewayMessage[]> {
    return this.appendPrepared(this.prepareAppend(subjectUid, input));
  }

  /**
   * Every check of `appendMessages` that needs no database (the subject, each message's
   * content, metadata, gateway facts and request settings, the limits), with the JSON text
   * ready to write. A write refused here refuses before anything else is done: a caller that
   * also calls a model checks the write first, so a refused request never reaches the model.
   */
  prepareAppend(subjectUid: string, input: AppendInput): PreparedAppend {
    return prepareAppend(subjectUid, input, this.limits);
  }

  /** Writes an append `prepareAppend` checked (B4). */
  async appendPrepared(prepared: PreparedAppend): Promise<GatewayMessage[]> {
    const { subjectUid: subject, request, conversationMetadata } = prepared;
    const now = this.#now();
    const messages = withLeases(prepared, now);
    return this.runAppend(
      {
        subjectUid: subject,
        conversationId: request.conversationId,
        previousMessageId: request.previousMessageId,
        messages,
        conversationMetadata,
        now: now.toISOString(),
        ...this.#memory.knownAnchor(subject, request.previousMessageId),
      },
      request.idempotencyKey,
      "append",
      { ...request, messages: prepared.messages },
    );
  }

  /**
   * Writes an append `prepareAppend` checked whose anchor the matcher decides in the write's
   * own transaction: its leading messages that are stored already are left out, the rest
   * continue the matched anchor (gateway/conversations/message-chains.ts). The anchor and conversation the
   * append was prepared with are not used. Returns the messages written.
   */
  async appendPreparedMatching(
    prepared: PreparedAppend,
    matcher: AppendMatcher,
  ): Promise<GatewayMessage[]> {
    const { subjectUid: subject, conversationMetadata } = prepared;
    const now = this.#now();
    const all = withLeases(prepared, now);
    const { rows, messages } = await inTransaction(this.database, async (trx) => {
      const anchor = await matcher.match(trx);
      const kept = all.slice(Math.min(anchor.storedMessages, all.length - 1));
      const rows = await appendWithinTransaction(
        trx,
        {
          subjectUid: subject,
          conversationId: anchor.conversationId,
          previousMessageId: anchor.previousMessageId,
          messages: kept,
          conversationMetadata,
          now: now.toISOString(),
        },
        this.database.capabilities.writesInWith,
      );
      const written = rows.map((row, index) => {
        const message = kept[index];
        if (message === undefined) throw new Error("append stored more rows than messages");
        return messageFromWrittenRow(row, message);
      });
      const conversationId = rows[0]?.conversation_id ?? "";
      await matcher.written(trx, anchor, conversationId, written);
      return { rows, messages: written };
    });
    messages.forEach((message, index) => {
      const row = rows[index];
      if (row !== undefined) this.#memory.keepWritten(message, row);
    });
    return messages;
  }

  /**
   * Appends with an idempotency key, when given, and returns the stored messages.
   * @internal for the gateway's own services (compression); left out of the published types.
   */
  async runAppend(
    plan: Omit<AppendPlan, "idempotency">,
    idempotencyKey: string | undefined,
    operation: IdempotentOperation,
    fingerprintOf: unknown,
  ): Promise<GatewayMessage[]> {
    const outcome = await appendChain(this.database, {
      ...plan,
      ...(idempotencyKey === undefined
        ? {}
        : {
            idempotency: {
              key: idempotencyKey,
              operation,
              fingerprint: requestFingerprint(operation, fingerprintOf),
            },
          }),
    });
    if (!outcome.replayed) {
      return outcome.rows.map((row, index) => {
        const prepared = plan.messages[index];
        if (prepared === undefined) throw new Error("append stored more rows than messages");
        const message = messageFromWrittenRow(row, prepared);
        this.#memory.keepWritten(message, row);
        return message;
      });
    }
    const rows = await findMessageRows(
      this.database.db,
      plan.subjectUid,
      outcome.result.messageIds,
    );
    return rows.map(messageFromRow);
  }

  /**
   * Starts a message (`in_progress`) continuing the anchor: written before the model answers,
   * so a crash leaves a visible in_progress row, not a hole.
   */
  async startMessage(
    subjectUid: string,
    input: Omit<AppendInput, "messages"> & {
      readonly message: Omit<AppendMessageInput, "status">;
    },
  ): Promise<GatewayMessage> {
    const { message, ...rest } = input;
    const [started] = await this.appendMessages(subjectUid, {
      ...rest,
      messages: [{ ...message, status: "in_progress" }],
    });
    if (started === undefined) throw new Error("append returned no message");
    return started;
  }

  /** Gives an in_progress message its final status and content (its only update). */
  async finishMessage(
    subjectUid: string,
    messageId: string,
    input: FinishInput,
  ): Promise<GatewayMessage> {
    return finishMessage(
      {
        database: this.database,
        memory: this.#memory,
        limits: this.limits,
        now: () => this.now(),
      },
      {
        subject: parseOrThrow(subjectSchema, subjectUid, "subjectUid"),
        id: parseOrThrow(idSchema, messageId, "messageId"),
        status: parseOrThrow(finalStatusSchema, input.status, "status"),
        content: input.content === undefined ? undefined : parseBlocks(input.content, "content"),
        facts: parseGatewayFacts(input.gateway, "gateway"),
      },
    );
  }

  async getMessage(subjectUid: string, messageId: string): Promise<GatewayMessage> {
    return messageFromRow(await this.#messageRow(subjectUid, messageId));
  }

  /**
   * The request settings stored with a response message (`request` of its append); null when it
   * has none (other messages, and responses stored before migration 0005).
   */
  async getRequestSettings(subjectUid: string, messageId: string): Promise<RequestSettings | null> {
    return requestSettingsFromRow(await this.#messageRow(subjectUid, messageId));
  }

  /** A message and its request settings, from one read of its row. */
  async getMessageWithRequest(
    subjectUid: string,
    messageId: string,
  ): Promise<{ readonly message: GatewayMessage; readonly request: RequestSettings | null }> {
    const row = await this.#messageRow(subjectUid, messageId);
    return { message: messageFromRow(row), request: requestSettingsFromRow(row) };
  }

  /** A message's row, scoped to the subject; a missing one (or another subject's) is not found. */
  async #messageRow(subjectUid: string, messageId: string): Promise<MessageRow> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    const id = parseOrThrow(idSchema, messageId, "messageId");
    const row = await findMessageRow(this.database.db, subject, id);
    if (row === undefined) throw messageNotFound(id);
    return row;
  }

  async getConversation(subjectUid: string, conversationId: string): Promise<GatewayConversation> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    const id = parseOrThrow(idSchema, conversationId, "conversationId");
    const row = await findConversation(this.database.db, subject, id);
    if (row === undefined) throw conversationNotFound(id);
    return conversationFromRow(row);
  }

  /**
   * The model-visible context of an anchor (B4, B6): the chain from the anchor back to its
   * start, or to the summary that replaced its past, oldest first.
   */
  async readContext(subjectUid: string, anchorId: string): Promise<MessageContext> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    const id = parseOrThrow(idSchema, anchorId, "anchorId");
    const anchor = await findAnchorFacts(this.database, this.#memory, subject, id);
    if (anchor === undefined) throw messageNotFound(id);
    const messages = await readChain(
      this.database,
      this.#memory,
      subject,
      anchor,
      anchor.context_start_depth,
    );
    const last = messages[messages.length - 1];
    if (last === undefined || last.id !== id) throw messageNotFound(id);
    return { anchor: last, messages };
  }

  /** The whole stored chain of an anchor back to its first message, summaries and all (audit). */
  async readFullChain(subjectUid: string, anchorId: string): Promise<GatewayMessage[]> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    const id = parseOrThrow(idSchema, anchorId, "anchorId");
    const anchor = await findAnchorFacts(this.database, this.#memory, subject, id);
    if (anchor === undefined) throw messageNotFound(id);
    return readChain(this.database, this.#memory, subject, anchor, 0);
  }

  /**
   * Messages of this subject by id, in the order given: final ones from the cache when it holds
   * them, the rest from one read of their rows (cached from then on). The list ends before the
   * first id that has no message of this subject.
   */
  async readMessages(subjectUid: string, ids: readonly string[]): Promise<GatewayMessage[]> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    return readMessagesById(this.database, this.#memory, subject, ids);
  }

  /** Every message of a conversation (all branches), in the order written, paged. */
  async listMessages(
    subjectUid: string,
    conversationId: string,
    page: { readonly limit?: number; readonly offset?: number } = {},
  ): Promise<GatewayMessage[]> {
    const conversation = await this.getConversation(subjectUid, conversationId);
    const limit = parseOrThrow(z.int().min(1).max(10_000), page.limit ?? 1000, "limit");
    const offset = parseOrThrow(z.int().min(0), page.offset ?? 0, "offset");
    const rows = await listConversationRows(
      this.database.db,
      conversation.subjectUid,
      conversation.id,
      { limit, offset },
    );
    return rows.map(messageFromRow);
  }

  /** The ids of the messages that continue a message: more than one means forks. */
  async listContinuations(subjectUid: string, messageId: string): Promise<string[]> {
    const message = await this.getMessage(subjectUid, messageId);
    return listContinuationIds(this.database.db, message.subjectUid, message.id);
  }
}
