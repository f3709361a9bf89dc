import type { SavedConversation, Usage } from "./conversation-schema.js";

const zeroUsage: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 };

/** A conversation with nothing in it (what a package without `agent/` opens as, A13). */
export function emptyConversation(): SavedConversation {
  return {
    formatVersion: 1,
    items: [],
    feedback: new Map(),
    skillCards: new Map(),
    lintRuleCards: new Map(),
    approvalCards: new Map(),
    resolvedCards: [],
    history: [],
    queued: [],
    unsent: [],
    usage: { ...zeroUsage },
    estimatedCost: { kind: "unknown" },
    sentFacts: [],
  };
}

/** True when there is nothing worth saving: no items, history, queued or returned messages (A4). */
export function isEmptyConversation(conversation: SavedConversation): boolean {
  return (
    conversation.items.length === 0 &&
    conversation.history.length === 0 &&
    conversation.queued.length === 0 &&
    conversation.unsent.length === 0
  );
}
