import type { PendingMessage } from "../format/conversation-schema.js";
import type { Item } from "../format/items.js";
import type { Block, Message } from "../history/message.js";
import { sha256Hex } from "../core/hash.js";
import type { ContextSection, OutgoingMessage } from "./api.js";
import { heldSections, planSections } from "./sections.js";
import type { ConversationState } from "./state.js";

export interface StartedTurn {
  readonly userMessage: Message;
  /** The message's text blocks joined by blank lines: what a CLI backend gets. */
  readonly text: string;
}

/**
 * Opens a turn in the state (A9): the user's panel item, the turn's `sentFacts` entry (its
 * start in history and the sections the model holds after it) and the user message carrying
 * the sections the model must get, then the user's text and images. `fresh` says the model
 * holds no section (a new CLI session), so every section goes whole.
 */
export function openTurn(
  state: ConversationState,
  message: PendingMessage,
  supplied: readonly ContextSection[],
  fresh: boolean,
): StartedTurn {
  const plan = planSections(supplied, fresh ? undefined : heldSections(state.sentFacts));
  const item: Item = { id: message.id, type: "user", text: message.text };
  if (message.images !== undefined) item.hasImage = true;
  state.items.push(item);
  const blocks: Block[] = [...plan.blocks];
  if (message.text !== "") blocks.push({ type: "text", text: message.text });
  for (const image of message.images ?? []) blocks.push({ type: "image", ...image });
  const userMessage: Message = { role: "user", content: blocks };
  state.sentFacts.push(
    plan.record === undefined
      ? { message: state.history.length }
      : { message: state.history.length, sections: new Map(plan.record) },
  );
  state.history.push(userMessage);
  const text = blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n\n");
  return { userMessage, text };
}

/** A message as it waits in the queue: its images stored by SHA-256 in `images`. */
export function pendingMessage(
  id: string,
  message: OutgoingMessage,
  images: Map<string, Uint8Array>,
): PendingMessage {
  const pending: PendingMessage = { id, text: message.text };
  if (message.images !== undefined && message.images.length > 0) {
    pending.images = message.images.map((image) => {
      const sha256 = sha256Hex(image.bytes);
      images.set(sha256, image.bytes);
      return { sha256, mimeType: image.mimeType };
    });
  }
  return pending;
}
