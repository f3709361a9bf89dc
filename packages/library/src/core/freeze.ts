/**
 * Deep freezing of values the library keeps by identity (the renderers' and encoders' caches):
 * once frozen, a value cannot change in place, so what was computed from it cannot go stale.
 * A change is then a new object, as the history model asks (docs/architecture.md).
 */

/** Objects this module froze whole, so a value is walked once however often it comes back. */
const deeplyFrozen = new WeakSet<object>();

/**
 * Freezes `value`, its arrays, plain objects and the keys and values of its maps, all the way
 * down, and returns it. Byte arrays are left as they are (JavaScript cannot freeze them); a
 * Map or Set stays open to `set`/`add` (freezing does not reach their entries).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (deeplyFrozen.has(value) || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    return value;
  }
  deeplyFrozen.add(value);
  if (value instanceof Map) {
    for (const [key, entry] of value as Map<unknown, unknown>) {
      deepFreeze(key);
      deepFreeze(entry);
    }
  } else if (value instanceof Set) {
    for (const entry of value as Set<unknown>) deepFreeze(entry);
  } else {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  Object.freeze(value);
  return value;
}
