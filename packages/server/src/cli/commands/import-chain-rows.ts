import type { Kysely } from "kysely";
import { VerbatimError, sha256Hex } from "verbatim-llm/core";
import { isBlockList, type Block, type Message } from "verbatim-llm/history";
import type { ImportedConversation } from "verbatim-llm/interop";
import { newId } from "../../gateway/ids.js";
import { TYPE_OF_ROLE } from "../../gateway/message-types.js";
import { conversationNotFound, messageNotFound } from "../../gateway/not-found.js";
import {
  DEFAULT_GATEWAY_LIMITS,
  appendMessageSchema,
  checkCallerMetadata,
  checkStoredText,
  parseGatewayFacts,
  parseOrThrow,
  serializeContent,
  subjectSchema,
  type GatewayLimits,
} from "../../gateway/validation.js";
import type { StoreDatabase } from "../../store/database.js";
import { queryTemplate, type QueryTemplate } from "../../store/query-template.js";
import { findConversation } from "../../store/repositories/gateway-conversations.js";
import type { IdempotencyKeyRow } from "../../store/repositories/gateway-idempotency.js";
import {
  BRANCH_COLUMNS,
  MESSAGE_COLUMNS,
  claimBranchTip,
  findAnchor,
  type AnchorRow,
  type MessageRow,
} from "../../store/repositories/gateway-messages.js";
import type { StoreSchema } from "../../store/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { splitTurns, writeTurns } from "./import-chain-writes.js";
import {
  longestStoredRun,
  prefixKeys,
  runKeys,
  writeDigest,
  type PrefixReference,
  type StoredIds,
} from "./import-chain-keys.js";

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
 *   SHA-256 of its turns (import-chain-keys.ts), so no canonical JSON fingerprint of the
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

/** The stored `metadata` of an imported message: no caller metadata, no gateway facts. */
const MESSAGE_METADATA = JSON.stringify({
  caller: checkCallerMetadata(undefined, "metadata"),
  gateway: parseGatewayFacts(undefined, "gateway"),
});

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
  /** The branch's id once the transaction decided it (the claimed one, or forkId). */
  id?: string;
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

/** A message row whose branch is decided when the batch is written. */
type PendingMessage = Omit<MessageRow, "branch_id"> & { readonly branch: BranchState };

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
  messages: PendingMessage[] = [];
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
    this.messages.push(...other.messages);
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
  /** Bytes of content kept before a transaction writes them (default 8 MiB). */
  readonly batchBytes?: number;
  /** The clock (tests). */
  readonly now?: () => Date;
}

/** What appending one history (the main one or a branch) gave. */
export interface AppendedRows {
  readonly ids: string[];
  readonly written: number;
  readonly conversationId: string | undefined;
}

/** One imported conversation's writes as `appendChainRows` plans them. */
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

  constructor(database: StoreDatabase, subject: string, options: ImportedChainRowsOptions = {}) {
    this.database = database;
    this.subject = subject;
    this.limits = { ...DEFAULT_GATEWAY_LIMITS, ...options.limits };
    this.#now = options.now ?? (() => new Date());
    this.#batchBytes = options.batchBytes ?? 8 * 1024 * 1024;
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
    if (this.#batch.bytes >= this.#batchBytes) await this.flush();
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
              (key) => plan.recorded.get(key) ?? this.#batch.recorded.get(key),
            ),
      write: async (group, anchor, conversation) => {
        const now = this.now();
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
          plan.messages.push({
            id,
            subject_uid: this.subject,
            conversation_id: start.conversationId,
            previous_message_id: index === 0 ? anchor : (newIds[index - 1] ?? null),
            type: TYPE_OF_ROLE[entry.role],
            role: entry.role,
            status: "completed",
            content,
            metadata: MESSAGE_METADATA,
            branch: start.branch,
            depth,
            context_start_depth: start.contextStart,
            created_at: now,
            updated_at: now,
            request: null,
            lease_expires_at: null,
          });
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
      const row = await findAnchor(this.database.db, this.subject, anchor);
      if (row === undefined) throw messageNotFound(anchor, undefined);
      if (row.status === "in_progress") {
        throw new VerbatimError(
          "gateway_anchor_in_progress",
          `message ${row.id} is still in progress and cannot be continued yet`,
          { where: "previousMessageId", hint: "Continue from it once it has a final status" },
        );
      }
      // A second write from the same stored anchor in this run finds it continued: a fork.
      const claims = !plan.claimed.has(row.id) && !this.#batch.claimed.has(row.id);
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
      if (!created && (await findConversation(this.database.db, this.subject, id)) === undefined)
        throw conversationNotFound(id);
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

  /** A key for each shorter run of a write's first turns (import-chain-keys.ts). */
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

  /** Writes every planned row in one transaction (SQLite: deferDurability's commit, no fsync). */
  async flush(): Promise<void> {
    const batch = this.#batch;
    if (batch.empty) return;
    this.#batch = new PendingRows();
    await inTransaction(this.database, async (trx) => {
      const forks: unknown[][] = [];
      for (const branch of batch.branches) {
        if (
          branch.claim !== undefined &&
          (await claimBranchTip(
            trx,
            this.subject,
            branch.claim,
            branch.tipDepth - branch.claim.depth,
          ))
        ) {
          branch.id = branch.claim.branch_id;
          continue;
        }
        branch.id = branch.forkId;
        const parent =
          typeof branch.parent === "object" && branch.parent !== null
            ? (branch.parent.id ?? branch.parent.forkId)
            : branch.parent;
        forks.push([
          branch.id,
          this.subject,
          branch.conversationId,
          parent,
          branch.forkDepth,
          branch.tipDepth,
          branch.createdAt,
        ]);
      }
      await insertRows(trx, CONVERSATIONS, batch.conversations, (row, values) =>
        values.push(row.id, row.subject_uid, row.created_at, row.metadata),
      );
      await insertRows(trx, BRANCHES, forks, (row, values) => values.push(...row));
      await insertRows(trx, MESSAGES, batch.messages, (row, values) => {
        for (const column of MESSAGE_COLUMNS)
          values.push(column === "branch_id" ? (row.branch.id ?? row.branch.forkId) : row[column]);
      });
      const keyValues = (row: IdempotencyKeyRow, values: unknown[]) => {
        for (const column of KEY_COLUMNS) values.push(row[column]);
      };
      await insertRows(trx, KEYS, batch.keys, keyValues);
      await insertRows(trx, PREFIX_KEYS, batch.prefixKeys, keyValues);
    });
  }
}

const KEY_COLUMNS = [
  "subject_uid",
  "idempotency_key",
  "operation",
  "request_sha256",
  "result",
  "created_at",
] as const satisfies readonly (keyof IdempotencyKeyRow)[];

/** A table's multi-row insert, kept compiled for each row count used (powers of two). */
interface InsertSpec {
  readonly table:
    | "ai_gateway_conversations"
    | "ai_gateway_branches"
    | "ai_gateway_messages"
    | "ai_gateway_idempotency_keys";
  readonly columns: readonly string[];
  /** Leave a row whose primary key is recorded already (prefix keys). */
  readonly keepExisting?: readonly ["subject_uid", "idempotency_key"];
  readonly templates: Map<number, QueryTemplate<unknown[], never>>;
}

const insertSpec = (
  table: InsertSpec["table"],
  columns: readonly string[],
  keepExisting?: InsertSpec["keepExisting"],
): InsertSpec => ({
  table,
  columns,
  ...(keepExisting ? { keepExisting } : {}),
  templates: new Map(),
});

const CONVERSATIONS = insertSpec("ai_gateway_conversations", [
  "id",
  "subject_uid",
  "created_at",
  "metadata",
]);
const BRANCHES = insertSpec("ai_gateway_branches", BRANCH_COLUMNS);
const MESSAGES = insertSpec("ai_gateway_messages", MESSAGE_COLUMNS);
const KEYS = insertSpec("ai_gateway_idempotency_keys", KEY_COLUMNS);
const PREFIX_KEYS = insertSpec("ai_gateway_idempotency_keys", KEY_COLUMNS, [
  "subject_uid",
  "idempotency_key",
]);

/** Most rows one statement inserts (messages: 16 values a row, 2,048 a statement). */
const MAX_ROWS_PER_STATEMENT = 128;

function insertTemplate(spec: InsertSpec, count: number): QueryTemplate<unknown[], never> {
  let template = spec.templates.get(count);
  if (template === undefined) {
    template = queryTemplate<unknown[], never>((db, slot) => {
      const width = spec.columns.length;
      const query = db
        .insertInto(spec.table)
        .values(
          Array.from({ length: count }, (_, row) =>
            Object.fromEntries(
              spec.columns.map((column, index) => [column, slot(row * width + index)]),
            ),
          ) as never,
        );
      const keep = spec.keepExisting;
      return keep === undefined
        ? query
        : query.onConflict((conflict) => conflict.columns([...keep]).doNothing());
    });
    spec.templates.set(count, template);
  }
  return template;
}

/** Inserts rows (`fill` pushes a row's values in the spec's column order) in few statements. */
async function insertRows<T>(
  trx: Kysely<StoreSchema>,
  spec: InsertSpec,
  rows: readonly T[],
  fill: (row: T, values: unknown[]) => void,
): Promise<void> {
  let at = 0;
  while (at < rows.length) {
    let count = MAX_ROWS_PER_STATEMENT;
    while (count > rows.length - at) count >>= 1;
    const values: unknown[] = [];
    for (let row = at; row < at + count; row++) fill(rows[row] as T, values);
    await insertTemplate(spec, count).run(trx, ...values);
    at += count;
  }
}
