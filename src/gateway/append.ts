import type { Kysely } from "kysely";
import { VerbatimError } from "../core/errors.js";
import type { Block, Role } from "../history/message.js";
import type { StoreDatabase } from "../store/database.js";
import { isUniqueViolation } from "../store/errors.js";
import {
  findConversation,
  insertConversation,
} from "../store/repositories/gateway-conversations.js";
import { insertIdempotencyKey } from "../store/repositories/gateway-idempotency.js";
import {
  claimBranchTip,
  findAnchor,
  insertBranch,
  insertMessageRows,
  type AnchorRow,
  type MessageRow,
} from "../store/repositories/gateway-messages.js";
import type { StoreSchema } from "../store/schema.js";
import {
  replayIdempotencyKey,
  type IdempotentOperation,
  type IdempotentResult,
} from "./idempotency.js";
import { newId } from "./ids.js";
import type {
  CallerMetadata,
  GatewayMessageMetadata,
  GatewayMessageStatus,
  GatewayMessageType,
} from "./message-types.js";
import { inTransaction } from "../store/transaction.js";
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
 * Appends messages as a chain in one transaction (B4): the first continues the anchor, each
 * next one continues the one before. When the anchor is the tip of its branch the branch grows;
 * when something already continues the anchor, a fork (a new branch) starts there, so siblings
 * never overwrite each other. With an idempotency key that was used before, nothing is written
 * and the first request's result comes back.
 */
export async function appendChain(
  database: StoreDatabase,
  plan: AppendPlan,
): Promise<AppendOutcome> {
  const { idempotency } = plan;
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
  const ids = plan.messages.map(() => newId("msg"));
  const count = plan.messages.length;
  let anchor: AnchorRow | undefined;
  let conversationId: string;
  let branchId: string;
  let firstDepth: number;
  let contextStart: number;
  if (plan.previousMessageId !== null) {
    anchor =
      plan.knownAnchor?.id === plan.previousMessageId
        ? plan.knownAnchor
        : await findAnchor(trx, subjectUid, plan.previousMessageId);
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
    conversationId = anchor.conversation_id;
    firstDepth = anchor.depth + 1;
    contextStart = anchor.context_start_depth;
  } else {
    if (plan.conversationId !== undefined) {
      const conversation = await findConversation(trx, subjectUid, plan.conversationId);
      if (conversation === undefined) throw conversationNotFound(plan.conversationId);
      conversationId = conversation.id;
    } else {
      conversationId = newId("conv");
    }
    firstDepth = 0;
    contextStart = 0;
  }
  const result: IdempotentResult = { conversationId, messageIds: ids };
  if (idempotency !== undefined) {
    await insertIdempotencyKey(trx, {
      subject_uid: subjectUid,
      idempotency_key: idempotency.key,
      operation: idempotency.operation,
      request_sha256: idempotency.fingerprint,
      result: JSON.stringify(result),
      created_at: now,
    });
  }
  if (plan.previousMessageId === null && plan.conversationId === undefined) {
    await insertConversation(trx, {
      id: conversationId,
      subject_uid: subjectUid,
      created_at: now,
      metadata: JSON.stringify(plan.conversationMetadata),
    });
  }
  if (anchor !== undefined && (await claimBranchTip(trx, subjectUid, anchor, count))) {
    branchId = anchor.branch_id;
  } else {
    branchId = newId("branch");
    await insertBranch(trx, {
      id: branchId,
      subject_uid: subjectUid,
      conversation_id: conversationId,
      parent_branch_id: anchor?.branch_id ?? null,
      fork_depth: firstDepth - 1,
      tip_depth: firstDepth + count - 1,
      created_at: now,
    });
  }
  const rows: MessageRow[] = plan.messages.map((message, index) => {
    const depth = firstDepth + index;
    if (message.startsContext) contextStart = depth;
    return {
      id: ids[index] ?? "",
      subject_uid: subjectUid,
      conversation_id: conversationId,
      previous_message_id: index === 0 ? (anchor?.id ?? null) : (ids[index - 1] ?? null),
      type: message.type,
      role: message.role,
      status: message.status,
      content: message.content,
      metadata: message.metadata,
      branch_id: branchId,
      depth,
      context_start_depth: contextStart,
      created_at: now,
      updated_at: now,
    };
  });
  await insertMessageRows(trx, rows);
  return { replayed: false, rows };
}
