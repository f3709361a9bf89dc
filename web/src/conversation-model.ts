import type { ChatMLMessage } from "../../packages/library/src/history/chatml.js";
import type { MessageCost, StoredMessage, UsageFacts } from "./api.js";

/**
 * What the page works out from a conversation's stored messages: the branches (forks), the
 * chain an anchor sees, which projected message comes from which stored message, and usage
 * totals.
 */
export interface Branch {
  /** The newest message of the branch (its leaf): the anchor that selects it. */
  readonly leaf: StoredMessage;
  /** How many messages the chain from the start to the leaf has. */
  readonly length: number;
  /** Where it leaves an earlier branch (the fork point), null for the first branch. */
  readonly forkedAt: string | null;
}

export class ConversationModel {
  readonly byId = new Map<string, StoredMessage>();
  readonly children = new Map<string, StoredMessage[]>();
  readonly order = new Map<string, number>();

  constructor(readonly messages: readonly StoredMessage[]) {
    messages.forEach((message, index) => {
      this.byId.set(message.id, message);
      this.order.set(message.id, index);
      const parent = message.previous_message_id;
      if (parent !== null) {
        const list = this.children.get(parent) ?? [];
        list.push(message);
        this.children.set(parent, list);
      }
    });
  }

  /** The chain from the start to `id`, oldest first (as far as the loaded messages reach). */
  chainTo(id: string): StoredMessage[] {
    const chain: StoredMessage[] = [];
    const seen = new Set<string>();
    let current = this.byId.get(id);
    while (current !== undefined && !seen.has(current.id)) {
      seen.add(current.id);
      chain.push(current);
      current =
        current.previous_message_id === null
          ? undefined
          : this.byId.get(current.previous_message_id);
    }
    return chain.reverse();
  }

  /** What an anchor's context holds (B6): its chain back to the start or to the last summary. */
  contextOf(id: string): StoredMessage[] {
    const chain = this.chainTo(id);
    let start = 0;
    chain.forEach((message, index) => {
      if (message.type === "summary") start = index;
    });
    return chain.slice(start);
  }

  /** Each leaf and its branch, in the order the leaves were written. */
  branches(): Branch[] {
    const onEarlier = new Set<string>();
    const result: Branch[] = [];
    for (const message of this.messages) {
      if ((this.children.get(message.id) ?? []).length > 0) continue;
      const chain = this.chainTo(message.id);
      let forkedAt: string | null = null;
      for (let index = chain.length - 1; index >= 0; index--) {
        const one = chain[index];
        if (one !== undefined && onEarlier.has(one.id)) {
          forkedAt = one.id;
          break;
        }
      }
      for (const one of chain) onEarlier.add(one.id);
      result.push({
        leaf: message,
        length: chain.length,
        forkedAt: result.length === 0 ? null : forkedAt,
      });
    }
    return result;
  }
}

/** How many ChatML messages a stored message projects to (src/trajectory/gateway-projection). */
export function projectedCount(message: StoredMessage): number {
  if (message.role === "assistant") return 1;
  const results = message.content.filter((block) => block.type === "toolResult").length;
  const parts = message.content.filter(
    (block) => block.type !== "toolCall" && block.type !== "toolResult",
  ).length;
  return results + (parts > 0 || results === 0 ? 1 : 0);
}

/** The stored message each projected message of `source` (in order) comes from. */
export function projectedSources(
  source: readonly StoredMessage[],
  projectedLength: number,
): (StoredMessage | undefined)[] {
  const sources: (StoredMessage | undefined)[] = [];
  for (const message of source) {
    for (let count = projectedCount(message); count > 0; count--) sources.push(message);
  }
  if (sources.length !== projectedLength)
    return Array.from({ length: projectedLength }, () => undefined);
  return sources;
}

export interface Totals {
  calls: number;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  /** Dollars of the calls whose cost is known (reported or estimated). */
  dollars: number;
  /** Calls whose cost the provider reported, estimated from prices, or could not be priced. */
  reported: number;
  estimated: number;
  unknown: number;
  /** Of `calls`, those whose answers are not in the history (an import's callsOutsideHistory). */
  outside: number;
}

export function usageTotals(messages: readonly StoredMessage[]): Totals {
  const totals: Totals = {
    calls: 0,
    input: 0,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
    dollars: 0,
    reported: 0,
    estimated: 0,
    unknown: 0,
    outside: 0,
  };
  for (const message of messages) {
    const outside = message.metadata.gateway?.callsOutsideHistory;
    if (outside !== undefined) {
      totals.calls += outside.calls;
      totals.outside += outside.calls;
      totals.input += outside.usage.input ?? 0;
      totals.cacheRead += outside.usage.cacheRead ?? 0;
      totals.cacheWrite += outside.usage.cacheWrite ?? 0;
      totals.output += outside.usage.output ?? 0;
      totals.dollars += outside.dollars;
      totals.reported += outside.reported;
      totals.estimated += outside.estimated;
      totals.unknown += outside.unknown;
    }
    const usage: UsageFacts | undefined = message.metadata.gateway?.usage;
    if (usage === undefined) continue;
    totals.calls += 1;
    totals.input += usage.input ?? 0;
    totals.cacheRead += usage.cacheRead ?? 0;
    totals.cacheWrite += usage.cacheWrite ?? 0;
    totals.output += usage.output ?? 0;
    const cost = costOf(message);
    if (cost === undefined || cost.kind === "unknown") totals.unknown += 1;
    else if (cost.kind === "reported" || cost.kind === "estimated") {
      totals.dollars += cost.dollars;
      totals[cost.kind] += 1;
    }
  }
  return totals;
}

/** A call's cost: the server's, else the one the provider reported in the usage. */
export function costOf(message: StoredMessage): MessageCost | undefined {
  if (message.cost !== undefined) return message.cost;
  const reported = message.metadata.gateway?.usage?.reportedCost;
  return reported === undefined ? undefined : { kind: "reported", dollars: reported };
}

/** Milliseconds from a message's start (created) to its final status (updated), when known. */
export function latencyOf(message: StoredMessage): number | undefined {
  if (
    message.role !== "assistant" ||
    message.updated_at === undefined ||
    message.status === "in_progress"
  ) {
    return undefined;
  }
  const took = Date.parse(message.updated_at) - Date.parse(message.created_at);
  return Number.isFinite(took) && took >= 0 ? took : undefined;
}

/** The text a find looks in: every string of the message. */
export function searchableText(message: StoredMessage | ChatMLMessage): string {
  return JSON.stringify(message).toLowerCase();
}
