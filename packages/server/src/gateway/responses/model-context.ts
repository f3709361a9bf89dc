import type { Block, Message } from "verbatim-llm/history";

/**
 * What the upstream model sees of stored messages (B2, B12): only roles and blocks, never a
 * stored id, status or metadata; and tool-call ids replaced by aliases `call_1`, `call_2`, …
 * numbered in order over the whole request (unique within it, as every provider requires),
 * each result keeping its call's alias. Provider-issued ids of earlier turns (`toolu_…`,
 * `call_…`) therefore never reach another provider, so a conversation can move between them.
 *
 * Returns the messages and the map back from alias to the stored id, so tool calls the model
 * makes in its answer keep the ids it gave them.
 */
export function modelVisibleHistory(messages: readonly Message[]): {
  readonly history: Message[];
  readonly aliases: ReadonlyMap<string, string>;
} {
  const aliasOf = new Map<string, string>();
  const aliases = new Map<string, string>();
  const alias = (id: string): string => {
    let name = aliasOf.get(id);
    if (name === undefined) {
      name = `call_${aliasOf.size + 1}`;
      aliasOf.set(id, name);
      aliases.set(name, id);
    }
    return name;
  };
  const history = messages.map((message): Message => ({
    role: message.role,
    content: message.content.map((block): Block => {
      if (block.type === "toolCall") return { ...block, id: alias(block.id) };
      if (block.type === "toolResult") return { ...block, callID: alias(block.callID) };
      return block;
    }),
  }));
  return { history, aliases };
}
