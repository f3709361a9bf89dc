import type {
  ApprovalCard,
  Cost,
  Feedback,
  LintRuleCard,
  PendingMessage,
  SavedConversation,
  SentFact,
  SkillCard,
  Usage,
} from "../format/conversation-schema.js";
import { emptyConversation } from "../format/empty.js";
import type { Item } from "../format/items.js";
import type { Message } from "../history/message.js";

/** The conversation's own state: what format 1 saves (A6), held mutable while the panel is open. */
export interface ConversationState {
  items: Item[];
  feedback: Map<string, Feedback>;
  skillCards: Map<string, SkillCard>;
  lintRuleCards: Map<string, LintRuleCard>;
  approvalCards: Map<string, ApprovalCard>;
  resolvedCards: string[];
  history: Message[];
  queued: PendingMessage[];
  unsent: PendingMessage[];
  usage: Usage;
  lastRoundUsage: Usage | undefined;
  estimatedCost: Cost;
  provider: string | undefined;
  model: string | undefined;
  sentFacts: SentFact[];
}

export function stateFromSaved(saved: SavedConversation): ConversationState {
  return {
    items: [...saved.items],
    feedback: new Map(saved.feedback),
    skillCards: new Map(saved.skillCards),
    lintRuleCards: new Map(saved.lintRuleCards),
    approvalCards: new Map(saved.approvalCards),
    resolvedCards: [...saved.resolvedCards],
    history: [...saved.history],
    queued: [...saved.queued],
    unsent: [...saved.unsent],
    usage: saved.usage,
    lastRoundUsage: saved.lastRoundUsage,
    estimatedCost: saved.estimatedCost,
    provider: saved.provider,
    model: saved.model,
    sentFacts: [...saved.sentFacts],
  };
}

export function emptyState(): ConversationState {
  return stateFromSaved(emptyConversation());
}

/** A copy of the state as format 1 holds it (optional keys absent when unset). */
export function savedFromState(state: ConversationState): SavedConversation {
  const saved: SavedConversation = {
    formatVersion: 1,
    items: [...state.items],
    feedback: new Map(state.feedback),
    skillCards: new Map(state.skillCards),
    lintRuleCards: new Map(state.lintRuleCards),
    approvalCards: new Map(state.approvalCards),
    resolvedCards: [...state.resolvedCards],
    history: [...state.history],
    queued: [...state.queued],
    unsent: [...state.unsent],
    usage: state.usage,
    estimatedCost: state.estimatedCost,
    sentFacts: [...state.sentFacts],
  };
  if (state.lastRoundUsage !== undefined) saved.lastRoundUsage = state.lastRoundUsage;
  if (state.provider !== undefined) saved.provider = state.provider;
  if (state.model !== undefined) saved.model = state.model;
  return saved;
}

/** True before the conversation was ever charged (its cost then reads `unknown` by default). */
export function neverCharged(state: ConversationState): boolean {
  const usage = state.usage;
  return (
    state.estimatedCost.kind === "unknown" &&
    usage.input + usage.output + usage.cacheRead + usage.cacheWrite + usage.webSearchRequests === 0
  );
}

export function replaceItem(items: Item[], item: Item): void {
  for (let index = items.length - 1; index >= 0; index -= 1) {
    if (items[index]?.id === item.id) {
      items[index] = item;
      return;
    }
  }
  items.push(item);
}

export function findItem(items: readonly Item[], id: string): Item | undefined {
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index];
    if (item?.id === id) return item;
  }
  return undefined;
}
