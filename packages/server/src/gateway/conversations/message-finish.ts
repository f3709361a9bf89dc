import { VerbatimError } from "verbatim-llm/core";
import type { Block, Role } from "verbatim-llm/history";
import type { StoreDatabase } from "../../store/database.js";
import { findMessageRow, finishMessageRow } from "../../store/repositories/gateway-messages.js";
import { inTransaction } from "../../store/transaction.js";
import type { MessageMemory } from "./message-memory.js";
import type {
  FinalStatus,
  GatewayFacts,
  GatewayMessage,
  GatewayMessageMetadata,
} from "./message-types.js";
import { messageNotFound } from "./not-found.js";
import { messageFromRow, parseStoredMetadata } from "./rows.js";
import { serializeContent } from "../validation/content.js";
import { type GatewayLimits } from "../validation/checks.js";

/** A finish, checked: the message, its final status and content, the facts known at the end. */
export interface CheckedFinish {
  readonly subject: string;
  readonly id: string;
  readonly status: FinalStatus;
  readonly content: readonly Block[] | undefined;
  readonly facts: GatewayFacts;
}

/** What finishing a message needs of its store. */
export interface FinishContext {
  readonly database: StoreDatabase;
  readonly memory: MessageMemory;
  readonly limits: GatewayLimits;
  readonly now: () => string;
}

/**
 * Gives an in_progress message its final status and content (its only update). A message this
 * store started is finished with one conditional UPDATE (its own durable commit); otherwise, or
 * when that updates nothing because the message was finished elsewhere meanwhile, the row is
 * read and checked in a transaction, which names the fault.
 */
export async function finishMessage(
  context: FinishContext,
  finish: CheckedFinish,
): Promise<GatewayMessage> {
  const { subject, id, status, content, facts } = finish;
  const started = context.memory.takeStarted(subject, id);
  if (started !== undefined) {
    const { final, metadata } = finalColumns(context, finish, {
      contentText: started.contentText,
      role: started.message.role,
      metadata: started.message.metadata,
    });
    if (await finishMessageRow(context.database.db, subject, id, final)) {
      const message: GatewayMessage = {
        ...started.message,
        status,
        content: content ?? started.message.content,
        metadata,
        updatedAt: final.updated_at,
      };
      context.memory.cacheFinished(message, started, final.content.length + final.metadata.length);
      return message;
    }
  }
  const row = await inTransaction(context.database, async (trx) => {
    const stored = await findMessageRow(trx, subject, id);
    if (stored === undefined) throw messageNotFound(id);
    if (stored.status !== "in_progress") {
      throw new VerbatimError(
        "gateway_message_not_in_progress",
        `message ${id} is already ${stored.status}; a finished message never changes`,
        { where: id, hint: "Read the message for its final state" },
      );
    }
    const { final } = finalColumns(context, finish, {
      contentText: stored.content,
      role: stored.role as Role,
      metadata: parseStoredMetadata(stored, stored.metadata),
    });
    if (!(await finishMessageRow(trx, subject, id, final))) throw messageNotFound(id);
    return { ...stored, ...final };
  });
  // Kept only once committed: a rolled-back finish leaves nothing behind.
  const message = messageFromRow(row);
  context.memory.cacheRow(message, row);
  return message;
}

/**
 * The columns a finish writes: the final status, the final content (the stored one when none
 * is given) and the stored metadata with the gateway facts known at the end merged in.
 */
function finalColumns(
  context: FinishContext,
  { status, content, facts }: CheckedFinish,
  stored: {
    readonly contentText: string;
    readonly role: Role;
    readonly metadata: GatewayMessageMetadata;
  },
) {
  const metadata: GatewayMessageMetadata = {
    caller: stored.metadata.caller,
    gateway: { ...stored.metadata.gateway, ...facts },
  };
  const final = {
    status,
    content:
      content === undefined
        ? stored.contentText
        : serializeContent(content, stored.role, context.limits, "content"),
    metadata: JSON.stringify(metadata),
    updated_at: context.now(),
  };
  return { final, metadata };
}
