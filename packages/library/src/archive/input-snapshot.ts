import { canonicalJsonFragment } from "../core/canonical-json.js";
import type { SavedConversation } from "../format/conversation-schema.js";

/**
 * What the last save was given, kept to recognise an unchanged save in O(references) without
 * encoding anything: arrays and maps compare element by element by identity (values are
 * treated as immutable, as the encoder does), small values by their canonical text.
 */
type FieldSnapshot =
  | { readonly kind: "array"; readonly items: readonly unknown[] }
  | { readonly kind: "map"; readonly entries: readonly (readonly [unknown, unknown])[] }
  | { readonly kind: "value"; readonly text: string | undefined };

export interface InputSnapshot {
  readonly fields: ReadonlyMap<string, FieldSnapshot>;
  readonly images: readonly (readonly [string, Uint8Array])[];
}

function fieldOf(value: unknown): FieldSnapshot {
  if (Array.isArray(value)) return { kind: "array", items: value.slice() };
  if (value instanceof Map) return { kind: "map", entries: [...(value as Map<unknown, unknown>)] };
  return { kind: "value", text: value === undefined ? undefined : canonicalJsonFragment(value, 1) };
}

export function snapshotInput(
  conversation: SavedConversation,
  images: ReadonlyMap<string, Uint8Array>,
): InputSnapshot {
  const record = conversation as unknown as Record<string, unknown>;
  const fields = new Map<string, FieldSnapshot>();
  for (const key of Object.keys(record)) fields.set(key, fieldOf(record[key]));
  return { fields, images: [...images] };
}

function sameField(value: unknown, field: FieldSnapshot): boolean {
  switch (field.kind) {
    case "array": {
      if (!Array.isArray(value) || value.length !== field.items.length) return false;
      const items = field.items;
      for (let index = 0; index < items.length; index++) {
        if (value[index] !== items[index]) return false;
      }
      return true;
    }
    case "map": {
      if (!(value instanceof Map) || value.size !== field.entries.length) return false;
      let index = 0;
      for (const [key, entry] of value as Map<unknown, unknown>) {
        const old = field.entries[index++];
        if (old === undefined || old[0] !== key || old[1] !== entry) return false;
      }
      return true;
    }
    case "value":
      if (Array.isArray(value) || value instanceof Map) return false;
      return (value === undefined ? undefined : canonicalJsonFragment(value, 1)) === field.text;
  }
}

/** True when the conversation and images are, reference for reference, what the snapshot holds. */
export function sameInput(
  conversation: SavedConversation,
  images: ReadonlyMap<string, Uint8Array>,
  snapshot: InputSnapshot,
): boolean {
  const record = conversation as unknown as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length !== snapshot.fields.size) return false;
  for (const key of keys) {
    const field = snapshot.fields.get(key);
    if (field === undefined || !sameField(record[key], field)) return false;
  }
  if (images.size !== snapshot.images.length) return false;
  let index = 0;
  for (const [sha256, bytes] of images) {
    const old = snapshot.images[index++];
    if (old === undefined || old[0] !== sha256 || old[1] !== bytes) return false;
  }
  return true;
}
