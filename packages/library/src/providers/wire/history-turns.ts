/**
 * The history grouped into wire turns: consecutive `user` and `tool` messages form one user
 * turn, consecutive `assistant` messages one assistant turn. Within a user turn the tool
 * results come first (Anthropic and Gemini refuse a user turn after tool calls that does not
 * start with their results; OpenAI needs the tool messages right after the assistant's calls).
 */
import { VerbatimError } from "../../core/errors.js";
import type { Block, Message } from "../../history/message.js";
import type { RenderWarning } from "../types.js";

/** A block with its place in the history. */
export interface PlacedBlock {
  readonly block: Block;
  readonly message: number;
  readonly index: number;
}

export interface WireTurn {
  readonly role: "user" | "assistant";
  readonly blocks: readonly PlacedBlock[];
}

export function whereOf(message: number, index?: number): string {
  return index === undefined ? `history[${message}]` : `history[${message}].content[${index}]`;
}

function refuse(message: number, index: number, what: string): never {
  throw new VerbatimError("provider_invalid_history", what, {
    where: whereOf(message, index),
    hint: "Tool calls belong to assistant messages; tool results to user or tool messages",
  });
}

/** Checks that a block may stand in a message of `role`. */
function checkPlacement(role: Message["role"], block: Block, message: number, index: number) {
  switch (block.type) {
    case "text":
    case "imageOmitted":
    case "image":
      // An assistant's image is one the model generated (docs/providers.md, "Generated images").
      return;
    case "toolCall":
      if (role !== "assistant")
        refuse(message, index, `a tool call cannot be sent in a ${role} message`);
      return;
    case "toolResult":
      if (role === "assistant")
        refuse(message, index, "a tool result cannot be sent in an assistant message");
      return;
    default: {
      const unknown: never = block;
      throw new VerbatimError(
        "provider_invalid_history",
        `unknown block ${JSON.stringify(unknown)}`,
        {
          where: whereOf(message, index),
        },
      );
    }
  }
}

export function groupTurns(history: readonly Message[], warnings: RenderWarning[]): WireTurn[] {
  const turns: { role: "user" | "assistant"; blocks: PlacedBlock[] }[] = [];
  for (let message = 0; message < history.length; message++) {
    const source = history[message] as Message;
    const role = source.role === "assistant" ? "assistant" : "user";
    let turn = turns[turns.length - 1];
    if (turn === undefined || turn.role !== role) {
      turn = { role, blocks: [] };
      turns.push(turn);
    }
    const content = source.content;
    for (let index = 0; index < content.length; index++) {
      const block = content[index] as Block;
      checkPlacement(source.role, block, message, index);
      if (block.type === "text" && block.text === "") {
        warnings.push({
          code: "empty_text_dropped",
          message: "an empty text block was not sent (providers refuse empty text)",
          where: whereOf(message, index),
        });
        continue;
      }
      turn.blocks.push({ block, message, index });
    }
  }
  const result: WireTurn[] = [];
  for (const turn of turns) {
    if (turn.blocks.length === 0) continue;
    if (turn.role === "user") moveToolResultsFirst(turn.blocks, warnings);
    result.push(turn);
  }
  return result;
}

function moveToolResultsFirst(blocks: PlacedBlock[], warnings: RenderWarning[]): void {
  let seenOther: PlacedBlock | undefined;
  let needed = false;
  for (const placed of blocks) {
    if (placed.block.type !== "toolResult") seenOther ??= placed;
    else if (seenOther !== undefined) needed = true;
  }
  if (!needed || seenOther === undefined) return;
  const results = blocks.filter((placed) => placed.block.type === "toolResult");
  const others = blocks.filter((placed) => placed.block.type !== "toolResult");
  blocks.splice(0, blocks.length, ...results, ...others);
  warnings.push({
    code: "tool_results_moved_first",
    message: "tool results were moved in front of other blocks of the same user turn",
    where: whereOf(seenOther.message, seenOther.index),
  });
}
