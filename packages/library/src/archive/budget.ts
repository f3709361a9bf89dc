import type { PendingMessage, SavedConversation } from "../format/conversation-schema.js";
import type { Block, Message } from "../history/message.js";
import { imageFileName } from "./layout.js";

/** An image the save keeps: its file name in `agent/images/` and its bytes. */
export interface KeptImage {
  readonly sha256: string;
  readonly bytes: Uint8Array;
}

export interface BudgetResult {
  /** The conversation as written: images past the budget are `imageOmitted`. */
  readonly conversation: SavedConversation;
  /** The image files the written conversation refers to, by file name. */
  readonly images: Map<string, KeptImage>;
  /** Image occurrences saved as `imageOmitted` (or dropped from queued messages) by this save. */
  readonly omittedOccurrences: number;
}

export interface BudgetOptions {
  readonly budgetBytes: number;
  /** False when an image cannot be stored under this name (something else is in the way). */
  readonly canStore: (fileName: string) => boolean;
  /** Copies made at earlier saves, reused so unchanged parts keep their identity. */
  readonly copies: WeakMap<object, { key: string; copy: object }>;
}

/** One image reference, in the order the budget counts them (newest first). */
interface Occurrence {
  readonly sha256: string;
  readonly mimeType: string;
  /** Which message: `history` index, or a pending list and index. */
  readonly list: "history" | "queued" | "unsent";
  readonly index: number;
  /** Which block (history) or which entry of `images` (pending). */
  readonly position: number;
}

function occurrencesNewestFirst(conversation: SavedConversation): Occurrence[] {
  const found: Occurrence[] = [];
  const pending = (list: "queued" | "unsent", messages: readonly PendingMessage[]): void => {
    for (let index = messages.length - 1; index >= 0; index--) {
      const images = messages[index]?.images ?? [];
      for (let position = images.length - 1; position >= 0; position--) {
        const image = images[position];
        if (image !== undefined) found.push({ ...image, list, index, position });
      }
    }
  };
  // Queued messages were sent last, messages returned to the input box just before them.
  pending("queued", conversation.queued);
  pending("unsent", conversation.unsent);
  const history = conversation.history;
  for (let index = history.length - 1; index >= 0; index--) {
    const content = (history[index] as Message).content;
    for (let position = content.length - 1; position >= 0; position--) {
      const block = content[position] as Block;
      if (block.type === "image") {
        found.push({
          sha256: block.sha256,
          mimeType: block.mimeType,
          list: "history",
          index,
          position,
        });
      }
    }
  }
  return found;
}

/**
 * Applies the 20 MiB image budget (A16). Images are counted newest first, each SHA-256 once (at
 * its newest position). The first image that does not fit and every older occurrence, even of a
 * hash kept at a newer position, are saved as `imageOmitted`. An image whose bytes the caller
 * does not hold, or that cannot be stored, is saved as `imageOmitted` without moving the cut.
 * Queued and returned messages count as newest; an image dropped from one leaves its `images`.
 * The conversation passed in is not changed.
 */
export function applyImageBudget(
  conversation: SavedConversation,
  images: ReadonlyMap<string, Uint8Array>,
  options: BudgetOptions,
): BudgetResult {
  const kept = new Map<string, KeptImage>();
  const counted = new Set<string>();
  const omitted = { history: new Map<number, Set<number>>(), queued: new Map(), unsent: new Map() };
  let total = 0;
  let cut = false;
  let omittedOccurrences = 0;
  for (const occurrence of occurrencesNewestFirst(conversation)) {
    const name = imageFileName(occurrence.sha256, occurrence.mimeType);
    const bytes = images.get(occurrence.sha256);
    let keep = false;
    if (!cut && bytes !== undefined && options.canStore(name)) {
      if (counted.has(occurrence.sha256)) keep = true;
      else if (total + bytes.length <= options.budgetBytes) {
        counted.add(occurrence.sha256);
        total += bytes.length;
        keep = true;
      } else cut = true;
    }
    if (keep && bytes !== undefined) {
      kept.set(name, { sha256: occurrence.sha256, bytes });
      continue;
    }
    omittedOccurrences++;
    const byMessage: Map<number, Set<number>> = omitted[occurrence.list];
    let positions = byMessage.get(occurrence.index);
    if (positions === undefined) byMessage.set(occurrence.index, (positions = new Set()));
    positions.add(occurrence.position);
  }
  if (omittedOccurrences === 0) return { conversation, images: kept, omittedOccurrences };
  return {
    conversation: {
      ...conversation,
      history: replaceOmitted(conversation.history, omitted.history, options.copies, omitBlocks),
      queued: replaceOmitted(conversation.queued, omitted.queued, options.copies, dropImages),
      unsent: replaceOmitted(conversation.unsent, omitted.unsent, options.copies, dropImages),
    },
    images: kept,
    omittedOccurrences,
  };
}

function omitBlocks(message: Message, positions: ReadonlySet<number>): Message {
  return {
    role: message.role,
    content: message.content.map((block, position) =>
      positions.has(position) && block.type === "image"
        ? { type: "imageOmitted", mimeType: block.mimeType }
        : block,
    ),
  };
}

function dropImages(message: PendingMessage, positions: ReadonlySet<number>): PendingMessage {
  return {
    ...message,
    images: (message.images ?? []).filter((_, position) => !positions.has(position)),
  };
}

/** The list with the given messages replaced by copies; copies are reused while unchanged. */
function replaceOmitted<T extends object>(
  list: readonly T[],
  omitted: ReadonlyMap<number, ReadonlySet<number>>,
  copies: WeakMap<object, { key: string; copy: object }>,
  transform: (value: T, positions: ReadonlySet<number>) => T,
): T[] {
  if (omitted.size === 0) return list as T[];
  const result = list.slice();
  for (const [index, positions] of omitted) {
    const original = list[index] as T;
    const key = [...positions].sort((a, b) => a - b).join(",");
    const cached = copies.get(original);
    if (cached !== undefined && cached.key === key) {
      result[index] = cached.copy as T;
      continue;
    }
    const copy = transform(original, positions);
    copies.set(original, { key, copy });
    result[index] = copy;
  }
  return result;
}
