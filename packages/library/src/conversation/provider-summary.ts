/**
 * A provider's own compaction summary (Anthropic server-side compaction) carried across turns.
 * The provider ignores everything before its `compaction` block; the block itself is provider
 * material that the saved history cannot hold (A23). So when the turn ends, the history takes
 * the form compaction already has in format 1 (A20): one user message `# Conversation so far`
 * followed by the summary, then what the model wrote after the block and the rest of the turn.
 * Every later request, on any provider (A24), and the first one after reopening (A26), then
 * carries the summary and none of what it replaced.
 */
import type { Message } from "../history/message.js";
import type { RoundCompaction } from "./backend.js";
import { COMPACTED_HEADING } from "./compaction.js";
import type { ConversationState } from "./state.js";
import type { ProviderSummary } from "./turn-host.js";

/** The panel notice a provider's compaction leaves (format 1 `notice`, kind `compacted`). */
export function providerCompactionNotice(compaction: RoundCompaction, provider: string): string {
  return compaction.kind === "summary"
    ? `The provider compacted the conversation: from the end of this turn, its summary replaces everything before it in the history sent to the model.`
    : `The provider compacted the conversation. Its compacted context is encrypted: it goes back with every later request to ${provider} while the conversation stays open, and it is not saved, so after reopening the next request sends the whole history again.`;
}

/**
 * The history from a provider's compaction summary on: A20's summary message, then what the
 * model wrote after the summary block, then the rest of the history. Undefined when the
 * message is not in the history.
 */
export function historyFromProviderSummary(
  history: readonly Message[],
  at: ProviderSummary,
): Message[] | undefined {
  const index = history.indexOf(at.message);
  if (index < 0) return undefined;
  const after = at.message.content.slice(at.block + 1);
  const summaryMessage: Message = {
    role: "user",
    content: [{ type: "text", text: `${COMPACTED_HEADING}\n${at.summary}` }],
  };
  return [
    summaryMessage,
    ...(after.length === 0 ? [] : [{ role: "assistant" as const, content: after }]),
    ...history.slice(index + 1),
  ];
}

/**
 * Replaces everything before the summary with A20's summary message. The turn is then the only
 * one left: `sentFacts` is one fact at the summary message, without sections (the sections
 * the model had were in the replaced messages, so the next turn sends them whole again).
 * Nothing changes when the message is no longer in the history.
 */
export function applyProviderSummary(state: ConversationState, at: ProviderSummary): boolean {
  const history = historyFromProviderSummary(state.history, at);
  if (history === undefined) return false;
  state.history = history;
  state.sentFacts = [{ message: 0 }];
  return true;
}
