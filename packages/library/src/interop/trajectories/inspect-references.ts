import { field, recordOf, stringOf, type JsonRecord } from "../json-access.js";

/**
 * Inspect's `attachment://<hash>` and `tc://<hash>` strings name text the log keeps once (the
 * sample's `attachments`, its `transcript.content`). Expanding them is bounded: a small log
 * that names one large attachment many times would otherwise expand without limit.
 */

/** The most the references may add beyond the tables themselves: one stored item's limit. */
export const REFERENCE_SLACK_MAX_BYTES = 4 * 1024 * 1024;
/** Expanded bytes allowed per byte of the tables (real logs repeat some text, not without end). */
export const REFERENCE_REPEAT_FACTOR = 10;
/** What any sample may expand to whatever its tables. */
export const REFERENCE_FLOOR_BYTES = 64 * 1024;

/** Thrown inside the expansion when the budget runs out; the caller refuses the sample. */
export class ReferenceBudgetExceeded extends Error {
  constructor(readonly budget: number) {
    super(`attachment references expand to more than ${budget} bytes`);
  }
}

function tablesOf(sample: JsonRecord): { attachments?: JsonRecord; transcript?: JsonRecord } {
  const attachments = recordOf(field(sample, "attachments"));
  const transcript = recordOf(field(recordOf(field(sample, "transcript")), "content"));
  return {
    ...(attachments === undefined ? {} : { attachments }),
    ...(transcript === undefined ? {} : { transcript }),
  };
}

function tableBytes(table: JsonRecord | undefined): number {
  let bytes = 0;
  for (const key of Object.keys(table ?? {})) {
    const text = stringOf(field(table, key));
    if (text !== undefined) bytes += Buffer.byteLength(text, "utf8");
  }
  return bytes;
}

/**
 * The budget of one sample: the tables once each, plus repeats of them up to ten times their
 * size and 64 KiB, but never more than one item's limit beyond the tables.
 */
export function referenceBudget(sample: JsonRecord): number {
  const tables = tablesOf(sample);
  const once = tableBytes(tables.attachments) + tableBytes(tables.transcript);
  return (
    once +
    Math.min(REFERENCE_SLACK_MAX_BYTES, REFERENCE_REPEAT_FACTOR * once + REFERENCE_FLOOR_BYTES)
  );
}

/**
 * Replaces `attachment://<id>` and `tc://<id>` strings by the text they name in the sample;
 * names that resolve to nothing are added to `unresolved`. Throws `ReferenceBudgetExceeded`
 * once the expanded text passes `budget` bytes, before building any more of it.
 */
export function resolveReferences(
  value: unknown,
  sample: JsonRecord,
  unresolved: string[],
  budget: number,
): unknown {
  const tables = tablesOf(sample);
  const sizes = new Map<string, number>();
  let spent = 0;
  const resolve = (entry: unknown): unknown => {
    if (typeof entry === "string") {
      const match = /^(attachment|tc):\/\/([0-9a-f]+)$/.exec(entry);
      if (match === null) return entry;
      const resolved = stringOf(
        field(match[1] === "attachment" ? tables.attachments : tables.transcript, match[2] ?? ""),
      );
      if (resolved === undefined) {
        unresolved.push(entry);
        return entry;
      }
      let size = sizes.get(entry);
      if (size === undefined) {
        size = Buffer.byteLength(resolved, "utf8");
        sizes.set(entry, size);
      }
      spent += size;
      if (spent > budget) throw new ReferenceBudgetExceeded(budget);
      return resolved;
    }
    if (Array.isArray(entry)) return entry.map(resolve);
    const record = recordOf(entry);
    if (record === undefined) return entry;
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(record)) {
      Object.defineProperty(copy, key, { value: resolve(record[key]), enumerable: true });
    }
    return copy;
  };
  return resolve(value);
}
