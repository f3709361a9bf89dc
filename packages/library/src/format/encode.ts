import {
  CanonicalFragment,
  canonicalJsonFragment,
  canonicalJsonBytes,
} from "../core/canonical-json.js";
import { VerbatimError } from "../core/errors.js";
import { deepFreeze } from "../core/freeze.js";
import type { Message } from "../history/message.js";
import type { SavedConversation } from "./conversation-schema.js";

/**
 * A cache of the canonical text of history messages. Messages never change once written, so a
 * saver that keeps one cache encodes only what is new at each save (docs/format-1.md).
 * Messages are keyed by identity and frozen (deeply) when first encoded, so a cached text
 * cannot go stale: a changed message is a new object.
 */
export type HistoryEncodingCache = WeakMap<Message, CanonicalFragment>;

/** History messages sit at depth 2 of the document: `{ "history" : [ {…} ] }`. */
const HISTORY_MESSAGE_DEPTH = 2;

export function createHistoryEncodingCache(): HistoryEncodingCache {
  return new WeakMap();
}

/** A message's canonical text; a refusal names its path in the whole document. */
function messageText(message: Message, index: number): string {
  try {
    return canonicalJsonFragment(message, HISTORY_MESSAGE_DEPTH);
  } catch (error) {
    if (!(error instanceof VerbatimError) || error.where === undefined) throw error;
    throw new VerbatimError(error.code, error.message, {
      where: `$.history[${index}]${error.where.slice(1)}`,
      ...(error.hint === undefined ? {} : { hint: error.hint }),
    });
  }
}

function historyFragments(
  history: readonly Message[],
  cache: HistoryEncodingCache,
): CanonicalFragment[] {
  return history.map((message, index) => {
    let fragment = cache.get(message);
    if (fragment === undefined) {
      fragment = new CanonicalFragment(messageText(message, index), HISTORY_MESSAGE_DEPTH);
      cache.set(deepFreeze(message), fragment);
    }
    return fragment;
  });
}

/** The canonical bytes of a conversation (A2): the same value always gives the same bytes. */
export function encodeConversation(
  conversation: SavedConversation,
  cache?: HistoryEncodingCache,
): Buffer {
  if (cache === undefined) return canonicalJsonBytes(conversation);
  return canonicalJsonBytes({
    ...conversation,
    history: historyFragments(conversation.history, cache),
  });
}
