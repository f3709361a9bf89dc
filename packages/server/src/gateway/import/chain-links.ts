import { basename } from "node:path";
import type { ImportedConversation } from "verbatim-llm/interop";

/**
 * Links Claude Code sub-agent chains to their session's chain in the gateway store: a
 * sub-agent's conversation is a chain of its own (never mixed into the main agent's), whose
 * metadata names the session (`parent_source_id`), the agent (`agent_id`) and, when the session
 * was imported in the same run, its conversation (`parent_conversation_id`) and the tool call
 * that ran the sub-agent (`parent_tool_call_id`).
 */
export class SubagentLinks {
  readonly #sessions = new Map<
    string,
    { readonly conversationId: string; readonly calls: ReadonlyMap<string, string> }
  >();

  /** The metadata linking a conversation to its parent (none for a main conversation). */
  metadataFor(imported: ImportedConversation): Record<string, string> {
    const parent = imported.parent;
    if (parent === undefined) return {};
    const session = this.#sessions.get(parent.sourceId);
    const call = session?.calls.get(parent.agentId);
    return {
      parent_source_id: parent.sourceId.slice(0, 512),
      agent_id: parent.agentId.slice(0, 512),
      ...(session === undefined ? {} : { parent_conversation_id: session.conversationId }),
      ...(call === undefined ? {} : { parent_tool_call_id: call.slice(0, 512) }),
    };
  }

  /** Remembers a main conversation's chain, for the sub-agents that follow it. */
  remember(imported: ImportedConversation, conversationId: string | undefined): void {
    if (imported.parent !== undefined || conversationId === undefined) return;
    this.#sessions.set(imported.sourceId, {
      conversationId,
      calls: imported.subagentCalls ?? new Map(),
    });
  }
}

/**
 * Session files before sub-agent files (`agent-*.jsonl`), each group in the order given: a
 * sub-agent's chain can then name its session's conversation.
 */
export function sessionsBeforeSubagents(files: readonly string[]): string[] {
  const isAgent = (file: string): boolean => basename(file).startsWith("agent-");
  return [...files.filter((file) => !isAgent(file)), ...files.filter(isAgent)];
}
