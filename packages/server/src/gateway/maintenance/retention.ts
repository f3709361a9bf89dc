import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Kysely } from "kysely";
import type { StoreDatabase } from "../../store/database.js";
import {
  callsDiffingAgainst,
  conversationsEndedBefore,
  conversationsOf,
  countConversationRows,
  countUnplacedCallsBefore,
  deleteCalls,
  deleteConversationRows,
  deleteIdempotencyKeysBefore,
  deleteImages,
  deletePacks,
  deletePieces,
  deleteSubjectLeftovers,
  imagesBefore,
  lockCalls,
  lockCallsOfConversation,
  lockPieces,
  manifestsOf,
  messageContentsOf,
  packsBefore,
  packsHeld,
  piecesBefore,
  piecesHeld,
  setFlatRequestManifest,
  unplacedCallsBefore,
  type ConversationKey,
  type DeletedRows,
} from "../../store/repositories/retention.js";
import { lockPacks } from "../../store/repositories/recorded-bodies.js";
import type { StoreSchema } from "../../store/schema.js";
import { inTransaction, type TransactionOptions } from "../../store/transaction.js";
import { BodyReader } from "../recording/bodies/body-reader.js";
import { decodeManifest, encodeManifest } from "../recording/bodies/manifest.js";
import { decodePackList } from "../recording/bodies/pack-list.js";
import { lengthOf } from "../recording/bodies/ranges.js";

/**
 * Retention and deletion (docs/server/retention.md): `verbatim db prune`, the server's rolling
 * retention (VERBATIM_RETENTION_DAYS) and `verbatim db delete-subject`.
 * - A conversation goes whole, with its messages, branches, chain nodes, recorded calls and
 *   jobs, once its last activity (a message written or updated, a call recorded, a job updated)
 *   is before the cutoff. Recorded calls never placed in a conversation go by their own time.
 * - Then the pieces of recorded bodies and the images nothing left refers to are freed.
 * - Each conversation is one transaction, each sweep step too: interrupted, a run leaves whole
 *   conversations and whole pieces, and the next run goes on. A call kept elsewhere whose
 *   request is a diff of a call being deleted gets its manifest written flat first. PostgreSQL
 *   locks what it deletes, so a recorder writing at the same time waits, then writes around it.
 * - Every statement names the subject: another subject's rows, even the same bytes, are never
 *   touched.
 * - It shares the process with a serving server (the rolling retention): between transactions
 *   it yields to the event loop, since SQLite's statements never do, and its commits do not
 *   wait for the disk (a step lost to a power cut is found again by the next run).
 */
export interface RetentionReport {
  readonly dry_run: boolean;
  /** The cutoff (prune), or null (a subject's deletion). */
  readonly before: string | null;
  readonly subject_uid: string | null;
  readonly conversations: number;
  readonly messages: number;
  readonly recorded_calls: number;
  readonly jobs: number;
  /**
   * Images and pieces freed, a pack counting as one piece (not counted in a dry run: they
   * depend on what else goes).
   */
  readonly images: number;
  readonly pieces: number;
  /** Bytes the freed pieces held, as stored. */
  readonly piece_bytes: number;
  /** API keys removed (a subject's deletion). */
  readonly api_keys: number;
}

export interface PruneOptions {
  /** ISO 8601 time: what ended before it goes. */
  readonly before: string;
  readonly subjectUid?: string;
  readonly dryRun?: boolean;
  /** Told after each conversation (a progress line). */
  readonly onProgress?: (done: RetentionReport) => void;
}

/** Manifests read per page, and piece ids weighed per pass: what a sweep holds in memory. */
const PAGE = 1000;
const PIECE_WINDOW = 200_000;
/** Packs weighed per pass (each holds a few hundred pieces). */
const PACK_WINDOW = 500;
/** Every step's commit: atomic, not waited for on disk (a re-run redoes a lost step). */
const LAZY: TransactionOptions = { waitForDisk: false };
/** A recorder's call kept up to this long before its commit is still seen by a sweep. */
const RECORDER_MARGIN_MS = 10 * 60 * 1000;

class Tally {
  conversations = 0;
  messages = 0;
  recorded_calls = 0;
  jobs = 0;
  images = 0;
  pieces = 0;
  piece_bytes = 0;
  api_keys = 0;
  constructor(
    readonly dry_run: boolean,
    readonly before: string | null,
    readonly subject_uid: string | null,
  ) {}
  add(rows: DeletedRows): void {
    this.conversations += rows.conversations;
    this.messages += rows.messages;
    this.recorded_calls += rows.recordedCalls;
    this.jobs += rows.jobs;
  }
  report(): RetentionReport {
    return { ...this };
  }
}

/** The pieces a call's own manifests name (a diff's base names the rest). */
function piecesNamed(row: {
  readonly request_manifest: Buffer | null;
  readonly response_manifest: Buffer | null;
}): number[] {
  const out: number[] = [];
  for (const bytes of [row.request_manifest, row.response_manifest]) {
    if (bytes === null) continue;
    for (const range of decodeManifest(bytes).ranges) out.push(range.piece);
  }
  return out;
}

/** Writes flat the request manifests of calls outside `ids` that are diffs of one of them. */
async function flattenDependents(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly string[],
): Promise<void> {
  const dependents = await callsDiffingAgainst(db, subjectUid, ids);
  if (dependents.length === 0) return;
  const reader = new BodyReader(db);
  for (const row of dependents) {
    const ranges = await reader.requestRanges(row);
    await setFlatRequestManifest(
      db,
      subjectUid,
      row.id,
      encodeManifest({ kind: "flat", length: lengthOf(ranges), ranges }),
    );
  }
}

async function deleteConversation(
  database: StoreDatabase,
  key: ConversationKey,
): Promise<DeletedRows> {
  return inTransaction(
    database,
    async (db) => {
      const callIds = await lockCallsOfConversation(db, database.capabilities, key);
      await flattenDependents(db, key.subject_uid, callIds);
      return deleteConversationRows(db, key, callIds);
    },
    LAZY,
  );
}

/** Deletes calls by id (unplaced ones), their dependents flattened first. */
async function deleteLooseCalls(
  database: StoreDatabase,
  subjectUid: string,
  ids: readonly string[],
): Promise<number> {
  return inTransaction(
    database,
    async (db) => {
      const locked = await lockCalls(db, database.capabilities, subjectUid, ids);
      await flattenDependents(db, subjectUid, locked);
      return deleteCalls(db, subjectUid, locked);
    },
    LAZY,
  );
}

/**
 * Frees a subject's pieces stored before `cutoff` that no call refers to any more: a window of
 * piece ids at a time, weighed against every call's manifests a page at a time (memory stays
 * bounded however many calls), then, in one transaction per window, locked, weighed again
 * against calls kept since the sweep began, and deleted with their chunks.
 */
async function sweepPieces(
  database: StoreDatabase,
  subjectUid: string,
  cutoff: string,
  tally: Tally,
): Promise<void> {
  const since = new Date(Date.now() - RECORDER_MARGIN_MS).toISOString();
  let after = 0;
  for (;;) {
    const candidates = await piecesBefore(database.db, subjectUid, cutoff, after, PIECE_WINDOW);
    if (candidates.length === 0) return;
    after = candidates[candidates.length - 1] as number;
    const unused = new Set(candidates);
    let page = "";
    for (;;) {
      const rows = await manifestsOf(database.db, database.capabilities, subjectUid, {
        after: page,
        limit: PAGE,
      });
      if (rows.length === 0) break;
      page = rows[rows.length - 1]?.id ?? page;
      for (const row of rows) for (const piece of piecesNamed(row)) unused.delete(piece);
      await yieldToEventLoop();
    }
    const ids = [...unused];
    for (let start = 0; start < ids.length; start += PAGE) {
      const slice = new Set(ids.slice(start, start + PAGE));
      const freed = await inTransaction(
        database,
        async (db) => {
          await lockPieces(db, database.capabilities, subjectUid, [...slice]);
          for (const row of await manifestsOf(db, database.capabilities, subjectUid, { since })) {
            for (const piece of piecesNamed(row)) slice.delete(piece);
          }
          return deletePieces(db, subjectUid, [...slice]);
        },
        LAZY,
      );
      tally.pieces += freed.pieces;
      tally.piece_bytes += freed.bytes;
      await yieldToEventLoop();
    }
  }
}

/**
 * Frees a subject's packs stored before `cutoff` none of whose pieces a call names any more, as
 * `sweepPieces` frees pieces: a window of packs at a time, their pieces weighed against every
 * call's manifests a page at a time, then, one transaction per page of packs, locked, weighed
 * again against calls kept since the sweep began, and deleted with their pieces' chunks. A pack
 * a call still names a piece of is kept whole.
 */
async function sweepPacks(
  database: StoreDatabase,
  subjectUid: string,
  cutoff: string,
  tally: Tally,
): Promise<void> {
  const since = new Date(Date.now() - RECORDER_MARGIN_MS).toISOString();
  let after = 0;
  for (;;) {
    const packs = await packsBefore(database.db, subjectUid, cutoff, after, PACK_WINDOW);
    if (packs.length === 0) return;
    after = packs[packs.length - 1]?.id ?? after;
    /** Each piece the window's packs hold: its pack. */
    const packOf = new Map<number, number>();
    const piecesOfPack = new Map<number, number[]>();
    for (const pack of packs) {
      const ids = decodePackList(pack.id, pack.size, pack.pieces).map((piece) => piece.id);
      piecesOfPack.set(pack.id, ids);
      for (const id of ids) packOf.set(id, pack.id);
    }
    const unused = new Set(piecesOfPack.keys());
    const weigh = (row: Parameters<typeof piecesNamed>[0]): void => {
      for (const piece of piecesNamed(row)) unused.delete(packOf.get(piece) ?? -1);
    };
    let page = "";
    for (;;) {
      const rows = await manifestsOf(database.db, database.capabilities, subjectUid, {
        after: page,
        limit: PAGE,
      });
      if (rows.length === 0) break;
      page = rows[rows.length - 1]?.id ?? page;
      for (const row of rows) weigh(row);
      await yieldToEventLoop();
    }
    const ids = [...unused];
    for (let start = 0; start < ids.length; start += PAGE) {
      const freed = await inTransaction(
        database,
        async (db) => {
          const slice = ids.slice(start, start + PAGE);
          const locked = await lockPacks(db, database.capabilities, subjectUid, slice, "update");
          for (const row of await manifestsOf(db, database.capabilities, subjectUid, { since }))
            weigh(row);
          const gone = locked.filter((id) => unused.has(id));
          const pieceIds = gone.flatMap((id) => piecesOfPack.get(id) ?? []);
          return deletePacks(db, subjectUid, gone, pieceIds);
        },
        LAZY,
      );
      tally.pieces += freed.pieces;
      tally.piece_bytes += freed.bytes;
      await yieldToEventLoop();
    }
  }
}

/** Frees a subject's images stored before `cutoff` that no message shows any more. */
async function sweepImages(
  database: StoreDatabase,
  subjectUid: string,
  cutoff: string,
  tally: Tally,
): Promise<void> {
  const unused = new Set(await imagesBefore(database.db, subjectUid, cutoff));
  if (unused.size === 0) return;
  const weigh = (content: string): void => {
    for (const sha256 of unused) if (content.includes(sha256)) unused.delete(sha256);
  };
  let after = "";
  for (;;) {
    const rows = await messageContentsOf(database.db, subjectUid, after, PAGE);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]?.id ?? after;
    for (const row of rows) weigh(row.content);
    if (unused.size === 0) return;
    await yieldToEventLoop();
  }
  tally.images += await inTransaction(
    database,
    async (db) => {
      // Messages written since the pages were read (ids count up with time).
      for (const row of await messageContentsOf(db, subjectUid, after, Number.MAX_SAFE_INTEGER)) {
        weigh(row.content);
      }
      return deleteImages(db, subjectUid, [...unused]);
    },
    LAZY,
  );
}

/**
 * Deletes (or, in a dry run, counts) each conversation of the pages `pageAfter` gives, in id
 * order, one transaction each.
 */
async function removeConversations(
  database: StoreDatabase,
  pageAfter: (after: string) => Promise<ConversationKey[]>,
  tally: Tally,
  onEach: (key: ConversationKey) => void,
): Promise<void> {
  let after = "";
  for (;;) {
    const page = await pageAfter(after);
    if (page.length === 0) return;
    after = page[page.length - 1]?.id ?? after;
    for (const key of page) {
      tally.add(
        tally.dry_run
          ? await countConversationRows(database.db, key)
          : await deleteConversation(database, key),
      );
      onEach(key);
      await yieldToEventLoop();
    }
  }
}

/** `verbatim db prune` and the rolling retention: deletes what ended before `before`. */
export async function pruneStore(
  database: StoreDatabase,
  options: PruneOptions,
): Promise<RetentionReport> {
  const cutoff = options.before;
  const dryRun = options.dryRun === true;
  const tally = new Tally(dryRun, cutoff, options.subjectUid ?? null);
  const subjects = new Set<string>();
  const filter = {
    cutoff,
    ...(options.subjectUid === undefined ? {} : { subjectUid: options.subjectUid }),
  };
  await removeConversations(
    database,
    (after) => conversationsEndedBefore(database.db, { ...filter, after }, 100),
    tally,
    (key) => {
      subjects.add(key.subject_uid);
      options.onProgress?.(tally.report());
    },
  );
  if (dryRun) {
    tally.recorded_calls += await countUnplacedCallsBefore(database.db, filter);
    return tally.report();
  }
  for (const seen = new Set<string>(); ;) {
    const calls = (await unplacedCallsBefore(database.db, filter, PAGE)).filter(
      (call) => !seen.has(call.id),
    );
    if (calls.length === 0) break;
    const bySubject = new Map<string, string[]>();
    for (const call of calls) {
      seen.add(call.id);
      bySubject.set(call.subject_uid, [...(bySubject.get(call.subject_uid) ?? []), call.id]);
    }
    for (const [subjectUid, ids] of bySubject) {
      subjects.add(subjectUid);
      tally.recorded_calls += await deleteLooseCalls(database, subjectUid, ids);
      await yieldToEventLoop();
    }
  }
  await deleteIdempotencyKeysBefore(database.db, filter);
  for (const subjectUid of subjects) {
    await sweepPieces(database, subjectUid, cutoff, tally);
    await sweepPacks(database, subjectUid, cutoff, tally);
    await sweepImages(database, subjectUid, cutoff, tally);
  }
  return tally.report();
}

/** `verbatim db delete-subject`: everything a subject owns, its API keys included. */
export async function deleteSubject(
  database: StoreDatabase,
  subjectUid: string,
  options: {
    readonly dryRun?: boolean;
    readonly onProgress?: (done: RetentionReport) => void;
  } = {},
): Promise<RetentionReport> {
  const dryRun = options.dryRun === true;
  const tally = new Tally(dryRun, null, subjectUid);
  await removeConversations(
    database,
    (after) => conversationsOf(database.db, subjectUid, after, 100),
    tally,
    () => options.onProgress?.(tally.report()),
  );
  const everything = { cutoff: "9999-12-31T23:59:59.999Z", subjectUid };
  if (dryRun) {
    tally.recorded_calls += await countUnplacedCallsBefore(database.db, everything);
    return tally.report();
  }
  for (;;) {
    const calls = await unplacedCallsBefore(database.db, everything, PAGE);
    if (calls.length === 0) break;
    const deleted = await deleteLooseCalls(
      database,
      subjectUid,
      calls.map((call) => call.id),
    );
    tally.recorded_calls += deleted;
    if (deleted === 0) break;
  }
  const pieces = await piecesHeld(database.db, subjectUid);
  const packs = await packsHeld(database.db, subjectUid);
  const images = await imagesBefore(database.db, subjectUid, everything.cutoff);
  const rest = await inTransaction(database, (db) => deleteSubjectLeftovers(db, subjectUid));
  tally.jobs += rest.jobs;
  tally.api_keys += rest.keys;
  tally.images += images.length;
  tally.pieces += pieces.pieces + packs.pieces;
  tally.piece_bytes += pieces.bytes + packs.bytes;
  return tally.report();
}

/** One line of what a run removed. */
export function retentionLine(report: RetentionReport): string {
  const verb = report.dry_run ? "would remove" : "removed";
  const freed = report.dry_run
    ? ""
    : `; freed ${report.pieces} piece(s) of recorded bytes (${(report.piece_bytes / 1024 / 1024).toFixed(1)} MB) and ${report.images} image(s)`;
  const keys = report.api_keys > 0 ? `, ${report.api_keys} API key(s)` : "";
  return `${verb} ${report.conversations} conversation(s), ${report.messages} message(s), ${report.recorded_calls} recorded call(s), ${report.jobs} job(s)${keys}${freed}`;
}
