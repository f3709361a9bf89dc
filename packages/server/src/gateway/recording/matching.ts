import type { Kysely } from "kysely";
import { findDeepestNode, type ChainNodeRow } from "../../store/repositories/recorded-calls.js";
import type { StoreSchema } from "../../store/schema.js";
import { nodeBeforeAnchor, nodeDeletion } from "../conversations/chain-deletions.js";

/** Where a recorded call continues its chain (docs/server/recorded-calls.md, "Matching: one chain per session"). */
export interface RecordedMatch {
  /** The deepest stored prefix the call continues (undefined: it starts a conversation). */
  readonly node: ChainNodeRow | undefined;
  /**
   * Stored nodes of the call's own prefixes name what the subject deleted: the call's nodes
   * take their place, so the session's next calls continue what this call writes.
   */
  readonly takeOver: boolean;
}

/**
 * The deepest stored prefix of a call's messages (prefix hashes, chain-matching.ts) that the
 * subject may still continue. What the subject deleted through the Conversations or Responses
 * routes is never continued:
 * - a deleted **conversation**: the call starts a new conversation, which takes over the
 *   call's prefixes (as `/v1/responses` without `previous_response_id` does);
 * - a deleted **message the match ends at** (an item, or an answer given back, deleted as a
 *   response): the call forks before it, continuing the wire message before that one (a new
 *   conversation when it was the first), and writes the rest again.
 * A message deleted further back in the chain is not looked at: it stays hidden, and the chain
 * goes on after it (as a `previous_response_id` whose earlier response was deleted).
 */
export async function matchRecordedCall(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  hashes: readonly string[],
): Promise<RecordedMatch> {
  let node = await findDeepestNode(db, subjectUid, hashes);
  let takeOver = false;
  while (node !== undefined) {
    const deleted = await nodeDeletion(db, subjectUid, node);
    if (deleted === "none") return { node, takeOver };
    takeOver = true;
    if (deleted === "conversation") return { node: undefined, takeOver };
    // The wire message before the one the deleted message holds.
    node = await nodeBeforeAnchor(db, subjectUid, hashes, node);
  }
  return { node: undefined, takeOver };
}
