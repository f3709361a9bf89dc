import type { Kysely } from "kysely";
import {
  findCallerDeletions,
  isMessageOrItsConversationDeleted,
} from "../../store/repositories/gateway-caller-deletions.js";
import { findDeepestNode, type ChainNodeRow } from "../../store/repositories/recorded-calls.js";
import type { StoreSchema } from "../../store/schema.js";

/**
 * What the subject deleted of the place a matched chain node names (docs/server/recorded-calls.md, "Matching:
 * one chain per session"): nothing, its conversation, or the message it ends at (an item, or an
 * answer deleted as a response). A node before the first whole message names no message: only
 * its conversation is looked at. Shared by recorded calls and `/v1/responses` without
 * `previous_response_id`, so both refuse to continue the same things.
 */
export type NodeDeletion = "none" | "conversation" | "message";

export async function nodeDeletion(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  node: ChainNodeRow,
): Promise<NodeDeletion> {
  const anchor = node.anchor_message_id;
  if (anchor !== null && !(await isMessageOrItsConversationDeleted(db, subjectUid, anchor))) {
    return "none";
  }
  if (await conversationDeleted(db, subjectUid, node.conversation_id)) return "conversation";
  return anchor === null ? "none" : "message";
}

/** Whether the subject deleted this conversation. */
export async function conversationDeleted(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  conversationId: string,
): Promise<boolean> {
  return (await findCallerDeletions(db, subjectUid, [conversationId])).has(conversationId);
}

/**
 * The stored node just before the message `node` ends at (`hashes` are the request's prefix
 * hashes): its anchor is the message before that one. Undefined when that message was the
 * first: the request then starts a new conversation.
 */
export async function nodeBeforeAnchor(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  hashes: readonly string[],
  node: ChainNodeRow,
): Promise<ChainNodeRow | undefined> {
  const hash = hashes[(node.anchor_count ?? 0) - 2];
  return hash === undefined ? undefined : findDeepestNode(db, subjectUid, [hash]);
}
