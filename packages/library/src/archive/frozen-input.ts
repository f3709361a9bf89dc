import { deepFreeze } from "../core/freeze.js";
import type { SavedConversation } from "../format/conversation-schema.js";
import type { InputSnapshot } from "./input-snapshot.js";

/**
 * Freezes the elements of a conversation's arrays and the values of its maps as a save takes
 * them in. A save keeps what it wrote by identity (the unchanged-save check, the image budget's
 * copies, the encoder's chunks), so an element changed in place later would be saved with its
 * old bytes; frozen, it cannot change, and a change is a new object. The arrays and maps
 * themselves stay the caller's to grow: a save compares them element by element.
 *
 * An element found at the same place in `taken` (what the open or the last save took in, frozen
 * then) is not walked again.
 */
export function freezeSavedElements(
  conversation: SavedConversation,
  taken: InputSnapshot | undefined,
): void {
  const record = conversation as unknown as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    const field = taken?.fields.get(key);
    if (Array.isArray(value)) {
      const before = field?.kind === "array" ? field.items : [];
      const elements = value as readonly unknown[];
      for (let index = 0; index < elements.length; index++) {
        const element = elements[index];
        if (element !== before[index]) deepFreeze(element);
      }
    } else if (value instanceof Map) {
      const before = field?.kind === "map" ? field.entries : [];
      let index = 0;
      for (const [entryKey, entry] of value as Map<unknown, unknown>) {
        const old = before[index++];
        if (old === undefined || old[0] !== entryKey || old[1] !== entry) deepFreeze(entry);
      }
    }
  }
}

/**
 * Freezes what the open decoded, all the way down, without recording each object as
 * `deepFreeze` does (a table entry per object: about 8 MB for a 100 MB file). The decoder's
 * values are a tree of plain objects, arrays and strings (no cycles, no shared parts, nesting
 * limited by the decoder), so a plain walk reaches each object once.
 */
export function freezeDecodedConversation(conversation: SavedConversation): void {
  for (const value of Object.values(conversation) as unknown[]) {
    if (Array.isArray(value)) {
      for (const element of value as unknown[]) freezeTree(element);
    } else if (value instanceof Map) {
      for (const entry of (value as Map<unknown, unknown>).values()) freezeTree(entry);
    }
  }
}

function freezeTree(value: unknown): void {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return;
  if (Array.isArray(value)) {
    for (const element of value as unknown[]) freezeTree(element);
  } else if (value instanceof Map) {
    for (const entry of (value as Map<unknown, unknown>).values()) freezeTree(entry);
  } else {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) freezeTree(record[key]);
  }
  Object.freeze(value);
}
