/**
 * Reading other tools' JSON without trusting its shape: each helper returns the value when it
 * has the expected type and undefined otherwise, so an importer never throws on schema drift.
 */
export interface JsonRecord {
  readonly [key: string]: unknown;
}

export function recordOf(value: unknown): JsonRecord | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonRecord)
    : undefined;
}

export function arrayOf(value: unknown): readonly unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

export function stringOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A count (non-negative integer) or 0. */
export function countOf(value: unknown): number {
  const number = numberOf(value);
  return number !== undefined && Number.isSafeInteger(number) && number >= 0 ? number : 0;
}

/** Own field of a record (never one of Object.prototype's). */
export function field(record: JsonRecord | undefined, key: string): unknown {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Compact JSON of a value for a `detail` line (keys in their source order). */
export function compactJson(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

/** The fields of a record without the listed ones (the envelope every line repeats). */
export function without(record: JsonRecord, keys: ReadonlySet<string>): JsonRecord {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    if (!keys.has(key)) Object.defineProperty(rest, key, { value: record[key], enumerable: true });
  }
  return rest;
}
