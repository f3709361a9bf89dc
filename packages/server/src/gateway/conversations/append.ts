import type { Kysely } from "kysely";
import { VerbatimError } from "verbatim-llm/core";
import type { Block, Role } from "verbatim-llm/history";
import type { StoreDatabase } from "../../store/database.js";
import { isUniqueViolation } from "../../store/errors.js";
import {
  findConversation,
  insertConversation,
} from "../../store/repositories/gateway-conversations.js";
import { insertIdempotencyKey } from "../../store/repositories/gateway-idempotency.js";
import {
  claimBranchTip,
  findAnchor,
  insertBranch,
  insertChainAtOnce,
  insertMessageRows,
  type AnchorRow,
  type MessageRow,
  type NewBranch,
} from "../../store/repositories/gateway-messages.js";
import type { StoreSchema } from "../../store/schema.js";
import {
  replayIdempotencyKey,
  type IdempotentOperation,
  type IdempotentResult,
} from "./idempotency.js";
import { newId } from "../ids.js";
import type {
  CallerMetadata,
  GatewayMessageMetadata,
  GatewayMessageStatus,
  GatewayMessageType,
} from "./message-types.js";
import { inTransaction } from "../../store/transaction.js";
import { conversationNotFound, messageNotFound } from "./not-found.js";

/**
 * One validated message ready to store: content and metadata as the JSON text written, and as
 * the values they hold (returned to the caller without parsing the text again).
 */
export interface PreparedMessage {
  readonly type: GatewayMessageType;
  readonly role: Role;
  readonly status: GatewayMessageStatus;
  readonly content: string;
  readonly blocks: readonly Block[];
  readonly metadata: string;
  readonly metadataValue: GatewayMessageMetadata;
  /** A summary starts its own model-visible context (B6). */
  readonly startsContext: boolean;
  /** The request settings of a response message, as JSON text; null for other messages. */
  readonly request: string | null;
  /** An in_progress message's lease (ISO time), when it has one (docs/server/responses.md). */
  readonly leaseExpiresAt?: string;
  /** The server holding that lease (its id; responses/leases.ts). */
  readonly leaseHolder?: string;
}

export interface AppendPlan {
  readonly subjectUid: string;
  /** The conversation: required when `previousMessageId` is null and it exists already. */
  readonly conversationId: string | undefined;
  /** The anchor, or null to start a chain (a new conversation when no conversationId). */
  readonly previousMessageId: string | null;
  /**
   * The anchor's row facts when the caller knows them (a final message's never change); read
   * from the database otherwise. Only for this subject's message `previousMessageId`.
   */
  readonly knownAnchor?: AnchorRow;
  readonly messages: readonly PreparedMessage[];
  /** Metadata of a conversation this append creates. */
  readonly conversationMetadata: CallerMetadata;
  readonly idempotency?: {
    readonly key: string;
    readonly operation: IdempotentOperation;
    readonly fingerprint: string;
  };
  readonly now: string;
}

export type AppendOutcome =
  | { readonly replayed: false; readonly rows: readonly MessageRow[] }
  | { readonly replayed: true; readonly result: IdempotentResult };

/**
 * Appends messages as a chain (B4): the first continues the anchor, each next one continues the
 * one before, all or nothing. When the anchor is the tip of its branch the branch grows; when
 * something already continues the anchor, a fork (a new branch) starts there, so siblings never
 * overwrite each other. With an idempotency key that was used before, nothing is written and the
 * first request's result comes back. On PostgreSQL a write without idempotency key is one
 * statement (`insertChainAtOnce`); otherwise one transaction of a few.
 */
export async function appendChain(
  database: StoreDatabase,
  plan: AppendPlan,
): Promise<AppendOutcome> {
  const { idempotency } = plan;
  if (idempotency === undefined && database.capabilities.writesInWith) {
    return { replayed: false, rows: await appendInOneStatement(database.db, plan) };
  }
  try {
    return await inTransaction(database, (trx) => appendInTransaction(trx, plan));
  } catch (error) {
    if (idempotency === undefined || !isUniqueViolation(error)) throw error;
    // A concurrent request with the same key committed first: answer as a repeat.
    const result = await replayIdempotencyKey(
      database.db,
      plan.subjectUid,
      idempotency.key,
      idempotency.operation,
      idempotency.fingerprint,
    );
    if (result === undefined) throw error;
    return { replayed: true, result };
  }
}

/** Where a write starts: its anchor (if any), its conversation, its first depth. */
interface ChainStart {
  readonly anchor: AnchorRow | undefined;
  readonly conversationId: string;
  /** The write creates its conversation. */
  readonly newConversation: boolean;
  readonly firstDepth: number;
  readonly contextStart: number;
}

/**
 * Checks the anchor (or the conversation a new chain starts in). An anchor's facts never change
 * once it is final and rows are never deleted, so this may read outside the write's transaction.
 */
async function chainStart(db: Kysely<StoreSchema>, plan: AppendPlan): Promise<ChainStart> {
  const { subjectUid } = plan;
  if (plan.previousMessageId !== null) {
    const anchor =
      plan.knownAnchor?.id === plan.previousMessageId
        ? plan.knownAnchor
        : await findAnchor(db, subjectUid, plan.previousMessageId);
    if (
      anchor === undefined ||
      (plan.conversationId !== undefined && anchor.conversation_id !== plan.conversationId)
    ) {
      throw messageNotFound(plan.previousMessageId, plan.conversationId);
    }
    if (anchor.status === "in_progress") {
      throw new VerbatimError(
        "gateway_anchor_in_progress",
        `message ${anchor.id} is still in progress and cannot be continued yet`,
        { where: "previousMessageId", hint: "Continue from it once it has a final status" },
      );
    }
    return {
      anchor,
      conversationId: anchor.conversation_id,
      newConversation: false,
      firstDepth: anchor.depth + 1,
      contextStart: anchor.context_start_depth,
    };
  }
  if (plan.conversationId !== undefined) {
    const conversation = await findConversation(db, subjectUid, plan.conversationId);
    if (conversation === undefined) throw conversationNotFound(plan.conversationId);
    return {
      anchor: undefined,
      conversationId: conversation.id,
      newConversation: false,
      firstDepth: 0,
      contextStart: 0,
    };
  }
  return {
    anchor: undefined,
    conversationId: newId("conv"),
    newConversation: true,
    firstDepth: 0,
    contextStart: 0,
  };
}

/** The rows of a write, chained: each continues the one before, the first the anchor. */
function chainRows(plan: AppendPlan, start: ChainStart, branchId: string): MessageRow[] {
  const ids = plan.messages.map(() => newId("msg"));
  let contextStart = start.contextStart;
  return plan.messages.map((message, index) => {
    const depth = start.firstDepth + index;
    if (message.startsContext) contextStart = depth;
    return {
      id: ids[index] ?? "",
      subject_uid: plan.subjectUid,
      conversation_id: start.conversationId,
      previous_message_id: index === 0 ? (start.anchor?.id ?? null) : (ids[index - 1] ?? null),
      type: message.type,
      role: message.role,
      status: message.status,
      content: message.content,
      metadata: message.metadata,
      branch_id: branchId,
      depth,
      context_start_depth: contextStart,
      created_at: plan.now,
      updated_at: plan.now,
      request: message.request,
      lease_expires_at: message.leaseExpiresAt ?? null,
      lease_holder: message.leaseHolder ?? null,
    };
  });
}

/** A new branch starting after `start`'s anchor (or a chain's first branch). */
function forkOf(plan: AppendPlan, start: ChainStart): NewBranch {
  return {
    id: newId("branch"),
    subject_uid: plan.subjectUid,
    conversation_id: start.conversationId,
    parent_branch_id: start.anchor?.branch_id ?? null,
    fork_depth: start.firstDepth - 1,
    tip_depth: start.firstDepth + plan.messages.length - 1,
    created_at: plan.now,
  };
}

async function appendInOneStatement(
  db: Kysely<StoreSchema>,
  plan: AppendPlan,
): Promise<MessageRow[]> {
  const start = await chainStart(db, plan);
  const fork = forkOf(plan, start);
  const rows = chainRows(plan, start, fork.id);
  const branchId = await insertChainAtOnce(db, {
    ...(start.newConversation
      ? {
          conversation: {
            id: start.conversationId,
            subject_uid: plan.subjectUid,
            created_at: plan.now,
            metadata: JSON.stringify(plan.conversationMetadata),
          },
        }
      : {}),
    ...(start.anchor === undefined ? {} : { extend: start.anchor }),
    fork,
    rows,
  });
  return branchId === fork.id ? rows : rows.map((row) => ({ ...row, branch_id: branchId }));
}

/**
 * Appends inside a transaction the caller opened and holds (a write that must be one with other
 * statements, as matching a chain); no idempotency key. Returns the rows written.
 */
export async function appendWithinTransaction(
  trx: Kysely<StoreSchema>,
  plan: Omit<AppendPlan, "idempotency">,
  writesInWith: boolean,
): Promise<readonly MessageRow[]> {
  // PostgreSQL: one statement (as appendChain), here inside the caller's transaction.
  if (writesInWith) return appendInOneStatement(trx, plan);
  const outcome = await appendInTransaction(trx, plan);
  if (outcome.replayed) throw new Error("an append without idempotency key was replayed");
  return outcome.rows;
}

async function appendInTransaction(
  trx: Kysely<StoreSchema>,
  plan: AppendPlan,
): Promise<AppendOutcome> {
  const { subjectUid, idempotency, now } = plan;
  if (idempotency !== undefined) {
    const result = await replayIdempotencyKey(
      trx,
      subjectUid,
      idempotency.key,
      idempotency.operation,
      idempotency.fingerprint,
    );
    if (result !== undefined) return { replayed: true, result };
  }
  const start = await chainStart(trx, plan);
  const fork = forkOf(plan, start);
  let branchId = fork.id;
  if (start.anchor !== undefined) {
    if (await claimBranchTip(trx, subjectUid, start.anchor, plan.messages.length)) {
      branchId = start.anchor.branch_id;
    }
  }
  const rows = chainRows(plan, start, branchId);
  if (idempotency !== undefined) {
    const result: IdempotentResult = {
      conversationId: start.conversationId,
      messageIds: rows.map((row) => row.id),
    };
    await insertIdempotencyKey(trx, {
      subject_uid: subjectUid,
      idempotency_key: idempotency.key,
      operation: idempotency.operation,
      request_sha256: idempotency.fingerprint,
      result: JSON.stringify(result),
      created_at: now,
    });
  }
  if (start.newConversation) {
    await insertConversation(trx, {
      id: start.conversationId,
      subject_uid: subjectUid,
      created_at: now,
      metadata: JSON.stringify(plan.conversationMetadata),
    });
  }
  if (branchId === fork.id) await insertBranch(trx, fork);
  await insertMessageRows(trx, rows);
  return { replayed: false, rows };
}
