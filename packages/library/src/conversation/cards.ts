import { VerbatimError } from "../core/errors.js";
import type {
  Feedback,
  LintRuleCard,
  PendingMessage,
  SkillCard,
} from "../format/conversation-schema.js";
import type { Item } from "../format/items.js";
import { findItem, type ConversationState } from "./state.js";

/** The state edits behind ratings, card states and the queue (the class fires the hook). */

export function notFound(what: string, id: string): VerbatimError {
  return new VerbatimError("conversation_item_not_found", `no ${what} with id ${id}`, {
    where: id,
    hint: "Pass the id of an item in this conversation.",
  });
}

export function requireItem(state: ConversationState, itemId: string, type?: Item["type"]): void {
  const item = findItem(state.items, itemId);
  if (item === undefined) throw notFound("item", itemId);
  if (type !== undefined && item.type !== type) {
    throw new VerbatimError("invalid_argument", `item ${itemId} is a ${item.type}, not a ${type}`, {
      where: itemId,
      hint: `Pass the id of a ${type} item.`,
    });
  }
}

export function moveQueuedToUnsent(state: ConversationState, queuedId: string): PendingMessage {
  const index = state.queued.findIndex((message) => message.id === queuedId);
  const message = state.queued[index];
  if (message === undefined) throw notFound("queued message", queuedId);
  state.queued.splice(index, 1);
  state.unsent.push(message);
  return message;
}

export function setFeedback(
  state: ConversationState,
  itemId: string,
  feedback: Feedback | undefined,
): void {
  requireItem(state, itemId);
  if (feedback === undefined) state.feedback.delete(itemId);
  else state.feedback.set(itemId, feedback);
}

export function setSkillCardState(
  state: ConversationState,
  itemId: string,
  card: SkillCard["state"],
): void {
  requireItem(state, itemId, "skillProposal");
  state.skillCards.set(itemId, { state: card });
}

export function setLintRuleCardState(
  state: ConversationState,
  itemId: string,
  card: LintRuleCard["state"],
): void {
  requireItem(state, itemId, "lintRuleProposal");
  state.lintRuleCards.set(itemId, { state: card });
}

export function markResolved(state: ConversationState, itemId: string): void {
  requireItem(state, itemId);
  if (!state.resolvedCards.includes(itemId)) state.resolvedCards.push(itemId);
}

export function recordApproval(
  state: ConversationState,
  itemId: string,
  answer: { readonly approved: boolean; readonly alwaysAllow?: boolean },
): void {
  requireItem(state, itemId, "toolApproval");
  const card = state.approvalCards.get(itemId);
  if (card !== undefined && card.state !== "pending") {
    throw new VerbatimError(
      "approval_already_answered",
      `the approval ${itemId} was already answered`,
      {
        where: itemId,
        hint: "Each tool approval is answered once.",
      },
    );
  }
  state.approvalCards.set(
    itemId,
    !answer.approved
      ? { state: "denied" }
      : answer.alwaysAllow === true
        ? { state: "approved", alwaysAllow: true }
        : { state: "approved" },
  );
}

export function hasPendingApproval(state: ConversationState): boolean {
  for (const card of state.approvalCards.values()) if (card.state === "pending") return true;
  return false;
}
