import { createHash } from "node:crypto";
import { sha256Hex } from "verbatim-llm/core";
import type { ImportedConversation } from "verbatim-llm/interop";
import type { Kysely } from "kysely";
import {
  findIdempotencyKey,
  findIdempotencyKeys,
  type IdempotencyKeyRow,
} from "../../store/repositories/gateway-idempotency.js";
import type { StoreSchema } from "../../store/schema.js";

/**
 * The idempotency keys of an import's writes into the store (both write paths: the gateway's,
 * chain-writes.ts, and the import's own, chain-rows.ts). A write's key is made of
 * the source, its id, the branch, the anchor and its turns' SHA-256; its result is the
 * gateway's (`{"conversationId":…,"messageIds":[…]}`). Beside a write of several turns, a
 * prefix key names each shorter run of its first turns; its result refers to the write's key
 * and says how many of its messages the run holds (`{"conversationId":…,"appendKey":…,
 * "messageCount":…}`), so that a write of n turns records O(n) bytes of prefixes, not the
 * O(n²) of an id list per prefix (issue 19). Prefix keys recorded with their id list (before
 * this) are read as they are.
 */

/** The operation of the keys that name the turns a write began with (never an append's key). */
export const PREFIX_OPERATION = "import-prefix";

/** The text a write's SHA-256 is made of before its turns': source, id, branch, anchor. */
function writeHead(imported: ImportedConversation, label: string, anchor: string | null): string {
  return [imported.source, imported.sourceId, label, anchor ?? ""].join("\u0000");
}

/**
 * The SHA-256 (hex) that names a write: of the source, its id, the branch, the anchor and the
 * turns' own SHA-256. The write's idempotency key is `import-` and its first 48 digits.
 */
export function writeDigest(
  imported: ImportedConversation,
  label: string,
  anchor: string | null,
  turns: readonly { sha256: string }[],
): string {
  return sha256Hex(
    [writeHead(imported, label, anchor), ...turns.map((turn) => turn.sha256)].join("\u0000"),
  );
}

/**
 * The writeDigest of each run of `turns` from the first: of `turns[0..1)`, `turns[0..2)` …
 * `turns[0..n)`, one hash carried along the turns (linear in their number, where a digest of
 * each run on its own would hash n²/2 turn digests).
 */
export function runDigests(
  imported: ImportedConversation,
  label: string,
  anchor: string | null,
  turns: readonly { sha256: string }[],
): string[] {
  const hash = createHash("sha256").update(writeHead(imported, label, anchor));
  return turns.map((turn) => hash.update(`\u0000${turn.sha256}`).copy().digest("hex"));
}

/** The idempotency key of a write: the source, its id, the branch, the anchor, the turns. */
export function writeKey(
  imported: ImportedConversation,
  label: string,
  anchor: string | null,
  turns: readonly { sha256: string }[],
): string {
  return `import-${writeDigest(imported, label, anchor, turns).slice(0, 48)}`;
}

/** What a write stored: its conversation and its messages' ids. */
export interface StoredIds {
  readonly conversationId: string;
  readonly messageIds: string[];
}

/** A prefix key's result: the first `messageCount` messages of the write of `appendKey`. */
export interface PrefixReference {
  readonly conversationId: string;
  readonly appendKey: string;
  readonly messageCount: number;
}

/** A run of turns written before: where it stops, and what it stored. */
export type StoredRun = StoredIds & { readonly stop: number };

/** The stored result of a prefix key. */
export function prefixResult(reference: PrefixReference): string {
  return JSON.stringify({
    conversationId: reference.conversationId,
    appendKey: reference.appendKey,
    messageCount: reference.messageCount,
  });
}

/** A recorded key's result: the ids a write stored, a prefix's reference, or undefined. */
export function storedWrite(
  row: IdempotencyKeyRow | undefined,
): StoredIds | PrefixReference | undefined {
  if (row === undefined || (row.operation !== "append" && row.operation !== PREFIX_OPERATION))
    return undefined;
  const result: unknown = JSON.parse(row.result);
  if (typeof result !== "object" || result === null) return undefined;
  const { conversationId, messageIds, appendKey, messageCount } = result as Record<string, unknown>;
  if (typeof conversationId !== "string") return undefined;
  if (row.operation === PREFIX_OPERATION && typeof appendKey === "string") {
    return typeof messageCount === "number" && Number.isSafeInteger(messageCount)
      ? { conversationId, appendKey, messageCount }
      : undefined;
  }
  // An append key's result, or a prefix key recorded with its ids (before issue 19).
  if (!Array.isArray(messageIds)) return undefined;
  const ids = messageIds.filter((id): id is string => typeof id === "string");
  return ids.length === messageIds.length ? { conversationId, messageIds: ids } : undefined;
}

/** The keys of the runs of `turns` from `next` that end at `end`, `end - 1` … `next + 1`. */
export function runKeys(
  imported: ImportedConversation,
  label: string,
  anchor: string | null,
  turns: readonly { sha256: string }[],
  next: number,
  end: number,
): string[] {
  return runDigests(imported, label, anchor, turns.slice(next, end))
    .map((digest) => `import-${digest.slice(0, 48)}`)
    .reverse();
}

/**
 * The ids a prefix reference names: the first `messageCount` of its write's (from `recorded`,
 * else from `rows` when the write's key was among those looked up, else read by its primary
 * key), or undefined when the write's key holds fewer.
 */
async function resolvePrefix(
  db: Kysely<StoreSchema>,
  subject: string,
  reference: PrefixReference,
  rows: ReadonlyMap<string, IdempotencyKeyRow>,
  recorded: (key: string) => StoredIds | PrefixReference | undefined,
): Promise<StoredIds | undefined> {
  let write = recorded(reference.appendKey);
  if (write === undefined) {
    const row =
      rows.get(reference.appendKey) ?? (await findIdempotencyKey(db, subject, reference.appendKey));
    write = row?.operation === "append" ? storedWrite(row) : undefined;
  }
  if (write === undefined || !("messageIds" in write)) return undefined;
  if (write.messageIds.length < reference.messageCount) return undefined;
  return {
    conversationId: reference.conversationId,
    messageIds: write.messageIds.slice(0, reference.messageCount),
  };
}

/**
 * The longest of the runs of `keys` (runKeys) already written from `anchor`, with the ids it
 * stored: the subject's recorded keys read in one query (a prefix key's write by one more),
 * and `recorded` (keys this process wrote and has not committed yet) beside them.
 */
export async function longestStoredRun(
  db: Kysely<StoreSchema>,
  subject: string,
  keys: readonly string[],
  end: number,
  recorded: (key: string) => StoredIds | PrefixReference | undefined = () => undefined,
): Promise<StoredRun | undefined> {
  const rows = await findIdempotencyKeys(db, subject, keys);
  const byKey = new Map(rows.map((row) => [row.idempotency_key, row]));
  for (const [index, key] of keys.entries()) {
    let stored = recorded(key) ?? storedWrite(byKey.get(key));
    if (stored !== undefined && "appendKey" in stored)
      stored = await resolvePrefix(db, subject, stored, byKey, recorded);
    if (stored !== undefined && stored.messageIds.length > 0)
      return { stop: end - index, ...stored };
  }
  return undefined;
}

/**
 * The prefix keys of a write of `group` from `anchor` that stored `stored` under `appendKey`:
 * one for each shorter run of its first turns, with its reference (for the keys this process
 * has not committed yet).
 */
export function prefixKeys(
  imported: ImportedConversation,
  label: string,
  anchor: string | null,
  group: readonly { messages: readonly unknown[]; sha256: string }[],
  write: {
    readonly subject: string;
    readonly appendKey: string;
    readonly conversationId: string;
    readonly now: string;
  },
): { row: IdempotencyKeyRow; reference: PrefixReference }[] {
  const digests = runDigests(imported, label, anchor, group.slice(0, -1));
  let count = 0;
  return digests.map((digest, index) => {
    count += group[index]?.messages.length ?? 0;
    const reference: PrefixReference = {
      conversationId: write.conversationId,
      appendKey: write.appendKey,
      messageCount: count,
    };
    const row: IdempotencyKeyRow = {
      subject_uid: write.subject,
      idempotency_key: `import-${digest.slice(0, 48)}`,
      operation: PREFIX_OPERATION,
      request_sha256: digest.slice(0, 48),
      result: prefixResult(reference),
      created_at: write.now,
    };
    return { row, reference };
  });
}
