import { VerbatimError, sha256Hex } from "verbatim-llm/core";
import type { Block, Message } from "verbatim-llm/history";
import { isBlockList } from "verbatim-llm/internal";
import type { ImportedConversation } from "verbatim-llm/interop";
import { newId } from "../ids.js";
import { TYPE_OF_ROLE } from "../conversations/message-types.js";
import { conversationNotFound, messageNotFound } from "../conversations/not-found.js";
import {
  DEFAULT_GATEWAY_LIMITS,
  checkStoredText,
  parseOrThrow,
  subjectSchema,
  type GatewayLimits,
} from "../validation/checks.js";
import { appendMessageSchema, serializeContent } from "../validation/content.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import type { StoreDatabase } from "../../store/database.js";
import { findConversation } from "../../store/repositories/gateway-conversations.js";
import type { IdempotencyKeyRow } from "../../store/repositories/gateway-idempotency.js";
import { findAnchor, type AnchorRow } from "../../store/repositories/gateway-messages.js";
import { CONVERSATION_COLUMNS, KEY_COLUMNS } from "../../store/repositories/import-rows.js";
import { packContents, type BatchBranch, type ChainBatch } from "./chain-batch.js";
import { inThreadWriter, threadWriter, type ChainBatchWriter } from "./chain-writer.js";
import { splitTurns, writeTurns } from "./chain-writes.js";
import { importedCallFacts, importedMetadataText } from "./call-facts.js";
import {
  longestStoredRun,
  prefixKeys,
  runKeys,
  writeDigest,
  type PrefixReference,
  type StoredIds,
} from "./chain-keys.js";

/**
 * The store's write path of `verbatim import … --into <database>` for chains: the rows of each
 * imported conversation (conversation, branches, messages, idempotency keys), exactly those the
 * gateway's `appendMessages` writes for the same writes (test/interop/import-rows.test.ts
 * compares them), made without the gateway's per-append work and written several
 * conversations to a transaction, a few multi-row statements each:
 *
 * - every message is checked as the gateway checks it (the block schema, the stored-text rule,
 *   the content's size), with the same refusals at the same `where`, and its content turned
 *   into JSON once: that text is both the row's content and what the turn's hash is made of;
 * - a write's idempotency key is made of the source, its id, the branch, the anchor and the
 *   SHA-256 of its turns (chain-keys.ts), so no canonical JSON fingerprint of the
 *   request is made: the key row's `request_sha256` is that SHA-256 in full (the key holds its
 *   first 48 digits), which names the import's write as well as the fingerprint named the
 *   request (a caller that sends the key with any other request is refused as before);
 * - a conversation is checked whole before any of its rows is kept: a refused conversation
 *   writes nothing, the others go on;
 * - the keys a write may already hold are looked up only when it continues from the start or
 *   from a stored message: a message written in this run has a new id, which no key can name.
 */

/** A history message with its content as JSON text (made once). */
interface TextMessage {
  readonly role: Message["role"];
  readonly message: Message;
  /** `JSON.stringify(message.content)`. */
  readonly text: string;
}

/** The order of each block type's keys in the schema (zod writes a parsed block's keys so). */
const KEY_ORDER: Readonly<Record<string, readonly string[]>> = {
  text: ["type", "text"],
  image: ["type", "sha256", "mimeType"],
  imageOmitted: ["type", "mimeType"],
  toolCall: ["type", "id", "name", "arguments", "argumentsBase64"],
  toolResult: ["type", "callID", "toolName", "isError", "content", "contentBase64"],
};

/** Blocks the schema accepts as they are, with their keys in the schema's order. */
function isCanonical(content: readonly Block[]): boolean {
  if (!isBlockList(content)) return false;
  for (const block of content) {
    const order = KEY_ORDER[block.type];
    if (order === undefined) return false;
    let at = 0;
    for (const key of Object.keys(block)) {
      while (at < order.length && order[at] !== key) at++;
      if (at === order.length) return false;
    }
  }
  return true;
}

function textMessage(message: Message): TextMessage {
  const text = JSON.stringify(message.content);
  return { role: message.role, message, text };
}

/** True when `JSON.stringify(message)` is `{"role":…,"content":…}`. */
function isPlainMessage(message: Message): boolean {
  const keys = Object.keys(message);
  return keys.length === 2 && keys[0] === "role" && keys[1] === "content";
}

/**
 * The SHA-256 of a turn's messages as JSON (`JSON.stringify(turn)`, the hash the key of an
 * import's write has always used), made of each message's text without stringifying again.
 */
function turnSha256(turn: readonly TextMessage[]): string {
  // One string hashed at once: cheaper than an update per piece.
  const pieces = turn.map((entry) =>
    isPlainMessage(entry.message)
      ? `{"role":${JSON.stringify(entry.role)},"content":${entry.text}}`
      : JSON.stringify(entry.message),
  );
  return sha256Hex(`[${pieces.join(",")}]`);
}

/**
 * The content text the gateway would store for a message at `where` of a write, with the
 * gateway's refusals (prepareAppend: the message's schema, then serializeContent).
 */
function storedContent(entry: TextMessage, limits: GatewayLimits, where: string): string {
  // The text is what the gateway stores when the schema accepts the blocks unchanged, their
  // keys in its order (checked only for messages that are written, not for a re-run's).
  if (!(entry.role in TYPE_OF_ROLE && isCanonical(entry.message.content))) {
    const parsed = parseOrThrow(
      appendMessageSchema,
      { role: entry.role, content: entry.message.content },
      where,
    );
    return serializeContent(parsed.content, parsed.role, limits, `${where}.content`);
  }
  // serializeContent's checks on the text made already.
  checkStoredText(entry.message.content, `${where}.content`);
  const bytes = Buffer.byteLength(entry.text, "utf8");
  if (bytes > limits.maxContentBytes) {
    // A rare case: the same refusal serializeContent makes.
    return serializeContent(entry.message.content, entry.role, limits, `${where}.content`);
  }
  return entry.text;
}

/** A branch this run writes into: a new one, or a stored one it extends if still its tip. */
interface BranchState {
  /** The id of the branch when it is new (a fork or a chain's first branch). */
  readonly forkId: string;
  readonly conversationId: string;
  readonly parent: BranchState | string | null;
  readonly forkDepth: number;
  tipDepth: number;
  readonly createdAt: string;
  /** A stored anchor whose branch this continues when the anchor is still its tip. */
  claim?: AnchorRow;
}

/** A branch of `count` messages after depth `forkDepth` of `parent`, planned in `plan`. */
function newBranch(
  plan: PendingRows,
  conversationId: string,
  parent: BranchState | string | null,
  forkDepth: number,
  count: number,
  now: string,
): BranchState {
  const branch: BranchState = {
    forkId: newId("branch"),
    conversationId,
    parent,
    forkDepth,
    tipDepth: forkDepth + count,
    createdAt: now,
  };
  plan.branches.push(branch);
  return branch;
}

/** What a message this run wrote tells the writes after it. */
interface WrittenMessage {
  readonly depth: number;
  readonly contextStart: number;
  readonly conversationId: string;
  readonly branch: BranchState;
}

/** Rows waiting for their transaction: one conversation's, or a batch of them. */
class PendingRows {
  conversations: { id: string; subject_uid: string; created_at: string; metadata: string }[] = [];
  branches: BranchState[] = [];
  /** PLANNED_MESSAGE_COLUMNS' values, row after row (chain-batch.ts). */
  messages: unknown[] = [];
  /** Each planned message's branch, decided when the batch is written. */
  messageBranches: BranchState[] = [];
  keys: IdempotencyKeyRow[] = [];
  prefixKeys: IdempotencyKeyRow[] = [];
  /** Keys recorded here, by key: found by a later conversation of the same run. */
  readonly recorded = new Map<string, StoredIds | PrefixReference>();
  /** Stored anchors a write here claims (a second write from one forks). */
  readonly claimed = new Set<string>();
  bytes = 0;

  add(other: PendingRows): void {
    this.conversations.push(...other.conversations);
    this.branches.push(...other.branches);
    for (const value of other.messages) this.messages.push(value);
    for (const branch of other.messageBranches) this.messageBranches.push(branch);
    this.keys.push(...other.keys);
    this.prefixKeys.push(...other.prefixKeys);
    for (const [key, value] of other.recorded) this.recorded.set(key, value);
    for (const id of other.claimed) this.claimed.add(id);
    this.bytes += other.bytes;
  }

  get empty(): boolean {
    return this.messages.length === 0 && this.prefixKeys.length === 0;
  }
}

export interface ImportedChainRowsOptions {
  readonly limits?: Partial<GatewayLimits>;
  /**
   * Bytes of content kept before a transaction writes them (default 8 MiB in one thread, 2 MiB
   * with the writer thread: smaller batches overlap more finely and leave a shorter last one to
   * wait for; 100 MB of Codex, 4 alternating runs each, medians 3.25-3.31 s with 1-2 MiB
   * against 3.49 s with 8 MiB).
   */
  readonly batchBytes?: number;
  /** The clock (tests). */
  readonly now?: () => Date;
  /**
   * Batches written by a thread of their own (SQLite files only; chain-writer.ts) while
   * the next is planned; default: in the calling thread, each before the next is planned.
   */
  readonly writerThread?: boolean;
}

/** What appending one history (the main one or a branch) gave. */
export interface AppendedRows {
  readonly ids: string[];
  readonly written: number;
  readonly conversationId: string | undefined;
}

/**
 * How one imported conversation's histories are written: the one interface of the import's two
 * write paths. The gateway's (`appendImportedChain`, chains.ts: each run of turns through
 * `appendMessages`) is the reference; the import's own (`ImportedChainRows`, below: the same
 * rows planned in batches and written in multi-row inserts) is kept because it pays on the
 * import's own workload (`node bin/run-ts.js bench/interop/append-paths.ts`, docs/interop.md
 * "What makes it fast"). One case table runs against both and compares every row they write
 * (test/interop/import-rows.test.ts).
 */
export interface ConversationRows {
  /** Two messages are the same (role and content), from the text made once per message. */
  same(a: Message, b: Message): boolean;
  /** Appends a history after `previous` (a message of the chain, or null for a new chain). */
  append(
    label: string,
    messages: readonly Message[],
    previous: string | null,
    conversationId: string | undefined,
  ): Promise<AppendedRows>;
}

/**
 * The lean write path of an import into the store (see the top of this file). `conversation`
 * plans one conversation's rows; `flush` writes what is planned in one transaction, which
 * `conversation` does by itself once the planned content passes `batchBytes`.
 */
export class ImportedChainRows {
  readonly database: StoreDatabase;
  readonly subject: string;
  readonly limits: GatewayLimits;
  readonly #now: () => Date;
  readonly #batchBytes: number;
  #batch = new PendingRows();
  #subjectChecked = false;
  /** Batches written in this thread (PostgreSQL, no writer thread asked for, or none yet). */
  readonly #inThread: ChainBatchWriter;
  /** Whether batches go to a writer thread (a SQLite file, `writerThread`). */
  readonly #threaded: boolean;
  /**
   * The writer thread, started with the first batch handed off before the last: an import of
   * one batch, or a re-run that writes nothing, does not load it.
   */
  #thread: ChainBatchWriter | undefined;
  /** The batches the writer holds and has not committed yet, oldest first (a pipelined writer's). */
  #inFlight: InFlight[] = [];

  constructor(database: StoreDatabase, subject: string, options: ImportedChainRowsOptions = {}) {
    this.database = database;
    this.subject = subject;
    this.limits = { ...DEFAULT_GATEWAY_LIMITS, ...options.limits };
    this.#now = options.now ?? (() => new Date());
    const location = database.location;
    this.#threaded =
      options.writerThread === true &&
      location.dialect === "sqlite" &&
      location.path !== ":memory:";
    this.#batchBytes = options.batchBytes ?? (this.#threaded ? 2 : 8) * 1024 * 1024;
    this.#inThread = inThreadWriter(database, subject);
  }

  now(): string {
    return this.#now().toISOString();
  }

  /**
   * Plans one conversation's writes (`write` calls `append` for its histories, in order):
   * kept for the batch when `write` returns, dropped whole when it throws. The batch is
   * written once it holds `batchBytes` of content.
   */
  async conversation<T>(
    imported: ImportedConversation,
    metadata: Readonly<Record<string, string>>,
    write: (rows: ConversationRows) => Promise<T>,
  ): Promise<T> {
    // The subject is checked once (as every gateway write checks it).
    if (!this.#subjectChecked) {
      parseOrThrow(subjectSchema, this.subject, "subjectUid");
      this.#subjectChecked = true;
    }
    const plan = new PendingRows();
    const written = new Map<string, WrittenMessage>();
    const texts = new Map<Message, TextMessage>();
    const textOf = (message: Message): TextMessage => {
      let entry = texts.get(message);
      if (entry === undefined) {
        entry = textMessage(message);
        texts.set(message, entry);
      }
      return entry;
    };
    const result = await write({
      same: (a, b) => a === b || (a.role === b.role && textOf(a).text === textOf(b).text),
      append: (label, messages, previous, conversationId) =>
        this.#append(
          { imported, metadata, plan, written },
          label,
          messages.map(textOf),
          previous,
          conversationId,
        ),
    });
    this.#batch.add(plan);
    if (this.#batch.bytes >= this.#batchBytes) {
      // At most MAX_IN_FLIGHT batches with the writer: the oldest is committed first.
      while (this.#inFlight.length >= MAX_IN_FLIGHT) await this.#oldestSettled();
      if (!this.#handOff(false)) await this.#settled();
    }
    return result;
  }

  async #append(
    context: {
      readonly imported: ImportedConversation;
      readonly metadata: Readonly<Record<string, string>>;
      readonly plan: PendingRows;
      readonly written: Map<string, WrittenMessage>;
    },
    label: string,
    messages: readonly TextMessage[],
    previous: string | null,
    conversationId: string | undefined,
  ): Promise<AppendedRows> {
    const { imported, plan, written } = context;
    const turns = splitTurns(messages).map((turn) => ({
      messages: turn,
      sha256: turnSha256(turn),
    }));
    return writeTurns(turns, previous, conversationId, {
      // Only a write from the start or from a stored message can have been made before: a
      // message this run wrote has a new id, which no key names.
      stored: async (anchor, next, end) =>
        anchor !== null && written.has(anchor)
          ? undefined
          : longestStoredRun(
              this.database.db,
              this.subject,
              runKeys(imported, label, anchor, turns, next, end),
              end,
              (key) =>
                plan.recorded.get(key) ??
                this.#batch.recorded.get(key) ??
                this.#inFlightRecorded(key),
            ),
      write: async (group, anchor, conversation) => {
        const now = this.now();
        const at = new Date(now);
        const entries = group.flatMap((turn) => turn.messages);
        const contents = entries.map((entry, index) =>
          storedContent(entry, this.limits, `messages[${index}]`),
        );
        const start = await this.#start(context, anchor, conversation, entries.length, now);
        const digest = writeDigest(imported, label, anchor, group);
        const newIds = entries.map(() => newId("msg"));
        entries.forEach((entry, index) => {
          const depth = start.firstDepth + index;
          const id = newIds[index] ?? "";
          const content = contents[index] ?? "";
          // PLANNED_MESSAGE_COLUMNS' order (the writer adds the columns every import row shares).
          plan.messages.push(
            id,
            start.conversationId,
            index === 0 ? anchor : (newIds[index - 1] ?? null),
            entry.role,
            content,
            depth,
            start.contextStart,
            now,
            // The usage of the model call it ends (null: none, the shared metadata).
            importedMetadataText(importedCallFacts(imported, entry.message, at)),
          );
          plan.messageBranches.push(start.branch);
          plan.bytes += content.length;
          written.set(id, {
            depth,
            contextStart: start.contextStart,
            conversationId: start.conversationId,
            branch: start.branch,
          });
        });
        const key = `import-${digest.slice(0, 48)}`;
        const stored = { conversationId: start.conversationId, messageIds: newIds };
        plan.keys.push({
          subject_uid: this.subject,
          idempotency_key: key,
          operation: "append",
          request_sha256: digest,
          result: JSON.stringify(stored),
          created_at: now,
        });
        plan.recorded.set(key, stored);
        this.#recordPrefixes(
          imported,
          plan,
          label,
          anchor,
          group,
          { appendKey: key, conversationId: start.conversationId },
          now,
        );
        return { ids: newIds, conversationId: start.conversationId, written: newIds.length };
      },
    });
  }

  /** Where a write starts (the gateway's chainStart, with this run's messages known). */
  async #start(
    context: {
      readonly metadata: Readonly<Record<string, string>>;
      readonly plan: PendingRows;
      readonly written: Map<string, WrittenMessage>;
    },
    anchor: string | null,
    conversationId: string | undefined,
    count: number,
    now: string,
  ): Promise<{
    conversationId: string;
    firstDepth: number;
    contextStart: number;
    branch: BranchState;
  }> {
    const { plan, written } = context;
    if (anchor !== null) {
      const known = written.get(anchor);
      if (known !== undefined) {
        let branch = known.branch;
        if (known.depth === branch.tipDepth) branch.tipDepth += count;
        else {
          branch = newBranch(plan, known.conversationId, known.branch, known.depth, count, now);
        }
        return {
          conversationId: known.conversationId,
          firstDepth: known.depth + 1,
          contextStart: known.contextStart,
          branch,
        };
      }
      const row = await this.#storedOrSettled(() =>
        findAnchor(this.database.db, this.subject, anchor),
      );
      if (row === undefined) throw messageNotFound(anchor, undefined);
      if (row.status === "in_progress") {
        throw new VerbatimError(
          "gateway_anchor_in_progress",
          `message ${row.id} is still in progress and cannot be continued yet`,
          { where: "previousMessageId", hint: "Continue from it once it has a final status" },
        );
      }
      // A second write from the same stored anchor in this run finds it continued: a fork.
      const claims =
        !plan.claimed.has(row.id) &&
        !this.#batch.claimed.has(row.id) &&
        !this.#inFlight.some((entry) => entry.rows.claimed.has(row.id));
      if (claims) plan.claimed.add(row.id);
      const branch = newBranch(plan, row.conversation_id, row.branch_id, row.depth, count, now);
      if (claims) branch.claim = row;
      return {
        conversationId: row.conversation_id,
        firstDepth: row.depth + 1,
        contextStart: row.context_start_depth,
        branch,
      };
    }
    let id = conversationId;
    if (id !== undefined) {
      const created = plan.conversations.some((row) => row.id === id);
      const stored =
        created ||
        (await this.#storedOrSettled(() =>
          findConversation(this.database.db, this.subject, id as string),
        )) !== undefined;
      if (!stored) throw conversationNotFound(id);
    } else {
      id = newId("conv");
      plan.conversations.push({
        id,
        subject_uid: this.subject,
        created_at: now,
        metadata: JSON.stringify(
          checkCallerMetadata({ ...context.metadata }, "conversationMetadata"),
        ),
      });
    }
    const branch = newBranch(plan, id, null, -1, count, now);
    return { conversationId: id, firstDepth: 0, contextStart: 0, branch };
  }

  /**
   * What `read` finds in the store; when it finds nothing while rows of this run wait to be
   * committed (the batch being planned, or those the writer holds), once more after they are:
   * the row may be one of theirs (a session imported twice in one run, the second time grown,
   * continues from a message the first wrote).
   */
  async #storedOrSettled<T>(read: () => Promise<T | undefined>): Promise<T | undefined> {
    const found = await read();
    if (found !== undefined || (this.#batch.empty && this.#inFlight.length === 0)) return found;
    this.#handOff(false);
    await this.#settled();
    return read();
  }

  /** A key for each shorter run of a write's first turns (chain-keys.ts). */
  #recordPrefixes(
    imported: ImportedConversation,
    plan: PendingRows,
    label: string,
    anchor: string | null,
    group: readonly { messages: readonly unknown[]; sha256: string }[],
    write: { readonly appendKey: string; readonly conversationId: string },
    now: string,
  ): void {
    const keys = prefixKeys(imported, label, anchor, group, {
      subject: this.subject,
      now,
      ...write,
    });
    for (const { row, reference } of keys) {
      plan.prefixKeys.push(row);
      if (!plan.recorded.has(row.idempotency_key))
        plan.recorded.set(row.idempotency_key, reference);
    }
  }

  /**
   * Writes every planned row: hands the batch to the writer and waits until it, and any batch
   * before it, is committed.
   */
  async flush(): Promise<void> {
    this.#handOff(true);
    await this.#settled();
  }

  /**
   * Ends the writer (its thread, when it has one) once the batches it holds are written or have
   * failed: call it after `flush`, which reports a failure, or after a failure of the import
   * (whose error is the one to report).
   */
  async close(): Promise<void> {
    for (const entry of this.#inFlight.splice(0)) await entry.done;
    await this.#thread?.close();
  }

  /**
   * Gives the writer the planned batch. A pipelined writer (a thread of its own) commits it
   * while the next one is planned: until then its keys and claims are read from here, and a
   * read of the store that misses waits for them (#settled) and reads again. The writer thread
   * starts with the first batch that is not the `last`. True when the batch went to a
   * pipelined writer (the caller goes on planning).
   */
  #handOff(last: boolean): boolean {
    const batch = this.#batch;
    if (batch.empty) return false;
    this.#batch = new PendingRows();
    if (this.#threaded && !last)
      this.#thread ??= threadWriter(this.database.location, this.subject);
    const writer = this.#thread ?? this.#inThread;
    const written = writer.write(chainBatch(batch, writer.pipelined));
    this.#inFlight.push({
      rows: batch,
      done: written.then(
        () => undefined,
        (error: unknown) => ({ error }),
      ),
    });
    return writer.pipelined;
  }

  /** A key recorded by a batch the writer holds. */
  #inFlightRecorded(key: string): StoredIds | PrefixReference | undefined {
    for (const entry of this.#inFlight) {
      const found = entry.rows.recorded.get(key);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** Waits until the oldest batch handed off is committed (its failure thrown here). */
  async #oldestSettled(): Promise<void> {
    const oldest = this.#inFlight[0];
    if (oldest === undefined) return;
    const failed = await oldest.done;
    if (this.#inFlight[0] === oldest) this.#inFlight.shift();
    if (failed !== undefined) throw failed.error;
  }

  /** Waits until every batch handed off is committed. */
  async #settled(): Promise<void> {
    while (this.#inFlight.length > 0) await this.#oldestSettled();
  }
}

/** A batch handed to the writer: its rows (keys, claims) and when it is committed. */
interface InFlight {
  readonly rows: PendingRows;
  readonly done: Promise<{ error: unknown } | undefined>;
}

/**
 * Batches a writer thread holds at most: four (8 MiB of content), so that planning goes on
 * while the thread loads (~0.2 s compiled, ~1 s from the TypeScript sources; it starts with the
 * first batch) and while it writes.
 */
const MAX_IN_FLIGHT = 4;

/**
 * A batch's rows as plain data for the writer (chain-batch.ts); for a writer thread
 * (`sent`), its contents packed into one buffer that is moved to it.
 */
function chainBatch(rows: PendingRows, sent: boolean): ChainBatch {
  const index = new Map<BranchState, number>();
  const branches: BatchBranch[] = rows.branches.map((branch, at) => {
    index.set(branch, at);
    let parent: number | string | null;
    if (typeof branch.parent === "object" && branch.parent !== null) {
      const parentIndex = index.get(branch.parent);
      // A branch's parent is planned with it, before it (one conversation's branches).
      if (parentIndex === undefined) throw new Error("a branch's parent is not in its batch");
      parent = parentIndex;
    } else parent = branch.parent;
    return {
      forkId: branch.forkId,
      conversationId: branch.conversationId,
      parent,
      forkDepth: branch.forkDepth,
      tipDepth: branch.tipDepth,
      createdAt: branch.createdAt,
      ...(branch.claim === undefined ? {} : { claim: branch.claim }),
    };
  });
  const messageBranches = rows.messageBranches.map((branch) => index.get(branch) ?? -1);
  const flat = <T>(list: readonly T[], columns: readonly (keyof T)[]): unknown[] => {
    const values: unknown[] = [];
    for (const row of list) for (const column of columns) values.push(row[column]);
    return values;
  };
  return {
    conversations: flat(rows.conversations, CONVERSATION_COLUMNS),
    branches,
    ...(sent ? { contents: packContents(rows.messages) } : {}),
    messages: rows.messages,
    messageBranches,
    keys: flat(rows.keys, KEY_COLUMNS),
    prefixKeys: flat(rows.prefixKeys, KEY_COLUMNS),
  };
}
