import { TYPE_OF_ROLE } from "../conversations/message-types.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import { parseGatewayFacts } from "../validation/gateway-facts.js";
import type { StoreDatabase } from "../../store/database.js";
import { claimBranchTip, type AnchorRow } from "../../store/repositories/gateway-messages.js";
import {
  insertBranchRows,
  insertConversationRows,
  insertKeyRows,
  insertMessageRows,
  insertPrefixKeyRows,
  type RowValues,
} from "../../store/repositories/import-rows.js";
import { inTransaction } from "../../store/transaction.js";

/**
 * One transaction's rows of an import into the store (chain-rows.ts plans them), as
 * plain data that a worker thread can be sent (chain-writer.ts): each table's rows as
 * one flat list of values in its columns' order. A message's `branch_id` is the index of its
 * branch in `branches`, decided when the batch is written (a branch that extends a stored one
 * keeps that branch's id when its tip is still the anchor, else it is a new fork).
 */
export interface ChainBatch {
  /** CONVERSATION_COLUMNS' values, row after row. */
  readonly conversations: unknown[];
  readonly branches: readonly BatchBranch[];
  /**
   * PLANNED_MESSAGE_COLUMNS' values, row after row; with `contents`, a message's `content` is
   * the length in bytes of its UTF-8 text there.
   */
  readonly messages: readonly unknown[];
  /**
   * The messages' contents as UTF-8, one after the other (SQLite: a batch sent to the writer
   * thread, whose buffer is moved, not copied; the text is bound as bytes and stored as TEXT).
   */
  readonly contents?: Uint8Array;
  /** Each message's branch: its index in `branches`. */
  readonly messageBranches: readonly number[];
  /** KEY_COLUMNS' values of the writes' keys, row after row. */
  readonly keys: unknown[];
  /** KEY_COLUMNS' values of the prefix keys (a key recorded already is left as it is). */
  readonly prefixKeys: unknown[];
}

/** A branch a batch writes into. */
export interface BatchBranch {
  /** Its id when it is new (a fork or a chain's first branch). */
  readonly forkId: string;
  readonly conversationId: string;
  /** A branch of the same batch (its index), a stored branch's id, or none. */
  readonly parent: number | string | null;
  readonly forkDepth: number;
  readonly tipDepth: number;
  readonly createdAt: string;
  /** A stored anchor whose branch this continues when the anchor is still its tip. */
  readonly claim?: AnchorRow;
}

/**
 * The columns of a planned message that differ between an import's rows; the others are the
 * same for every message an import writes (planned rows are sent to the writer thread: fewer
 * values, less to copy).
 */
export const PLANNED_MESSAGE_COLUMNS = [
  "id",
  "conversation_id",
  "previous_message_id",
  "role",
  "content",
  "depth",
  "context_start_depth",
  "created_at",
  // Null for the shared MESSAGE_METADATA; the text for a message that ends a model call.
  "metadata",
] as const;

/** The stored `metadata` of an imported message: no caller metadata, no gateway facts. */
const MESSAGE_METADATA = JSON.stringify({
  caller: checkCallerMetadata(undefined, "metadata"),
  gateway: parseGatewayFacts(undefined, "gateway"),
});

/** Where a planned message's content is among its values. */
const CONTENT_SLOT = PLANNED_MESSAGE_COLUMNS.indexOf("content");

/**
 * Moves a batch's contents into one buffer of UTF-8 (`contents`), each message's content
 * replaced by its length there: the buffer is moved to the writer thread, not copied.
 */
export function packContents(messages: unknown[]): Uint8Array {
  const width = PLANNED_MESSAGE_COLUMNS.length;
  let total = 0;
  for (let at = CONTENT_SLOT; at < messages.length; at += width)
    total += Buffer.byteLength(messages[at] as string, "utf8");
  // A buffer of its own (not a slice of Node's pool), so that it can be transferred.
  const contents = Buffer.allocUnsafeSlow(total);
  let offset = 0;
  for (let at = CONTENT_SLOT; at < messages.length; at += width) {
    const length = contents.write(messages[at] as string, offset, "utf8");
    messages[at] = length;
    offset += length;
  }
  return contents;
}

/**
 * A batch's message rows as MESSAGE_COLUMNS' values, made a statement's rows at a time (no
 * list of every row's values), with their branches' ids; packed contents become views of their
 * bytes.
 */
function messageValues(
  subject: string,
  batch: ChainBatch,
  branchIds: readonly string[],
): { readonly rows: number; readonly fill: RowValues } {
  const planned = batch.messages;
  const width = PLANNED_MESSAGE_COLUMNS.length;
  const rows = planned.length / width;
  const contents = batch.contents;
  // Where each packed content starts.
  const starts = new Float64Array(contents === undefined ? 0 : rows);
  if (contents !== undefined) {
    let offset = contents.byteOffset;
    for (let row = 0; row < rows; row++) {
      starts[row] = offset;
      offset += planned[row * width + CONTENT_SLOT] as number;
    }
  }
  const fill = (from: number, to: number, values: unknown[]): void => {
    for (let row = from; row < to; row++) {
      const at = row * width;
      let content = planned[at + CONTENT_SLOT];
      if (contents !== undefined) {
        const length = content as number;
        // A view of its bytes (an empty one as text: SQLite binds an empty view as NULL).
        content = length === 0 ? "" : new Uint8Array(contents.buffer, starts[row], length);
      }
      const role = planned[at + 3] as keyof typeof TYPE_OF_ROLE;
      const createdAt = planned[at + 7];
      const metadata = planned[at + 8] ?? MESSAGE_METADATA;
      values.push(
        planned[at], // id
        subject,
        planned[at + 1], // conversation_id
        planned[at + 2], // previous_message_id
        TYPE_OF_ROLE[role],
        role,
        "completed",
        content,
        metadata,
        branchIds[batch.messageBranches[row] ?? -1],
        planned[at + 5], // depth
        planned[at + 6], // context_start_depth
        createdAt,
        createdAt, // updated_at
        null, // request
        null, // lease_expires_at
      );
    }
  };
  return { rows, fill };
}

/** Writes a batch's rows in one transaction (SQLite: deferDurability's commit, no fsync). */
export async function writeChainBatch(
  database: StoreDatabase,
  subject: string,
  batch: ChainBatch,
): Promise<void> {
  await inTransaction(database, async (trx) => {
    const ids: string[] = [];
    const forks: unknown[] = [];
    for (const branch of batch.branches) {
      if (
        branch.claim !== undefined &&
        (await claimBranchTip(trx, subject, branch.claim, branch.tipDepth - branch.claim.depth))
      ) {
        ids.push(branch.claim.branch_id);
        continue;
      }
      ids.push(branch.forkId);
      const parent =
        typeof branch.parent === "number" ? (ids[branch.parent] ?? null) : branch.parent;
      forks.push(
        branch.forkId,
        subject,
        branch.conversationId,
        parent,
        branch.forkDepth,
        branch.tipDepth,
        branch.createdAt,
      );
    }
    await insertConversationRows(trx, batch.conversations);
    await insertBranchRows(trx, forks);
    const messages = messageValues(subject, batch, ids);
    await insertMessageRows(trx, messages.rows, messages.fill, batch.contents !== undefined);
    await insertKeyRows(trx, batch.keys);
    await insertPrefixKeyRows(trx, batch.prefixKeys);
  });
}
