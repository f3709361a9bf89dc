import { deepFreeze } from "../core/freeze.js";
import type { SavedConversation } from "../format/conversation-schema.js";

/**
 * Freezes the elements of a conversation's arrays and the values of its maps as a save takes
 * them in. A save keeps what it wrote by identity (the unchanged-save check, the image budget's
 * copies, the encoder's chunks), so an element changed in place later would be saved with its
 * old bytes; frozen, it cannot change, and a change is a new object. The arrays and maps
 * themselves stay the caller's to grow: a save compares them element by element.
 */
export function freezeSavedElements(conversation: SavedConversation): void {
  for (const value of Object.values(conversation) as unknown[]) {
    if (Array.isArray(value)) {
      for (const element of value as unknown[]) deepFreeze(element);
    } else if (value instanceof Map) {
      for (const entry of (value as Map<unknown, unknown>).values()) deepFreeze(entry);
    }
  }
}
