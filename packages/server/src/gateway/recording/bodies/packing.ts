import type { StoreDatabase } from "../../../store/database.js";
import {
  anyOldBodyCall,
  deletePackedPieces,
  insertPieces,
  manifestsSince,
  moveChunks,
  newPieceIds,
  readPieces,
  readPiecesForUpdate,
  setManifests,
  smallPieces,
  type PieceFacts,
} from "../../../store/repositories/recorded-bodies.js";
import { inTransaction } from "../../../store/transaction.js";
import { compressPack, decompressPieces, type Codec } from "./compression.js";
import { decodeManifest, encodeManifest, moveManifestPieces, type MovedPiece } from "./manifest.js";

/**
 * Packing (docs/server/recorded-calls.md, "How recorded bytes are stored", 5): a subject's
 * small pieces (each call's new bytes, 1–10 KiB) are joined into packs of up to PACK_BYTES,
 * compressed as one frame, so compression has the context of the calls before (where it pays:
 * a session's turns repeat its words, tool names and event framing) and a long request is read
 * from a few pieces, not one per call. One transaction per pack: the new piece, every chunk and
 * every manifest that named the old pieces pointed at it, the old pieces deleted.
 *
 * Who names a piece: the call that stored it and later ones (a diff's middle, a chunk found
 * again, a manifest written flat from its base's). A call is kept (`created_at`) before it
 * names anything, so the calls to rewrite are those kept since the pack's oldest piece, less
 * SKEW_MS for clocks of other servers and the time from a call's start to its commit. Stores
 * still converting calls recorded before migration 0015 are not packed (a converted call is
 * kept with its old time and may name newer pieces).
 */

/** The largest pack, before compression (256 KiB packs stored 15 % more on the bench's session). */
export const PACK_BYTES = 1024 * 1024;
/** Pieces this small are packed (a pack smaller than this is joined again with later ones). */
export const SMALL_PIECE = PACK_BYTES / 2;
/** Margin for the clocks of servers sharing a database and a call's time before its commit. */
const SKEW_MS = 10 * 60 * 1000;
/** Pieces weighed per pass. */
const CANDIDATES = 4096;

export interface PackReport {
  /** Packs written. */
  packs: number;
  /** Pieces they replaced. */
  pieces: number;
  /** Bytes as stored: of the pieces replaced, and of the packs. */
  bytesBefore: number;
  bytesAfter: number;
}

export interface PackOptions {
  /** Codec of the packs. */
  readonly codec: Codec;
  /** Pieces stored before this time (ISO 8601) are packed (default: all). */
  readonly before?: string;
  /**
   * false: only full packs (a session still recording leaves its newest pieces for later);
   * true (default): the rest too, as one smaller pack (an idle subject).
   */
  readonly all?: boolean;
  /** Lowest piece id worth weighing (a hint from the pass before). */
  readonly fromId?: number;
  /** Awaited before each pack's transaction (the recorder's quiet gate). */
  readonly beforeEach?: () => Promise<void>;
}

/** Groups of pieces, in id order, each at most PACK_BYTES; the last may be short. */
function groupsOf(pieces: readonly PieceFacts[]): { pieces: PieceFacts[]; full: boolean }[] {
  const groups: { pieces: PieceFacts[]; full: boolean }[] = [];
  let current: PieceFacts[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    if (current.length > 0 && bytes + piece.size > PACK_BYTES) {
      groups.push({ pieces: current, full: true });
      current = [];
      bytes = 0;
    }
    current.push(piece);
    bytes += piece.size;
  }
  if (current.length > 0) groups.push({ pieces: current, full: false });
  return groups;
}

/**
 * Packs a subject's small pieces; returns what it did and the lowest id a later pass needs to
 * weigh. `verbatim serve` runs it in the background (BodyPacking); tests and the bench call it.
 */
export async function packSubject(
  database: StoreDatabase,
  subjectUid: string,
  options: PackOptions,
): Promise<PackReport & { nextFromId: number }> {
  const report: PackReport = { packs: 0, pieces: 0, bytesBefore: 0, bytesAfter: 0 };
  let fromId = options.fromId ?? 0;
  if (await anyOldBodyCall(database.db)) return { ...report, nextFromId: fromId };
  const before = options.before ?? new Date(Date.now() + 1000).toISOString();
  for (;;) {
    const candidates = await smallPieces(
      database.db,
      subjectUid,
      { smallerThan: SMALL_PIECE, before, fromId },
      CANDIDATES,
    );
    const groups = groupsOf(candidates);
    let packed = 0;
    for (const group of groups) {
      if (group.pieces.length < 2 || (!group.full && options.all === false)) {
        // Left for a later pass: it starts here.
        fromId = group.pieces[0]?.id ?? fromId;
        break;
      }
      await options.beforeEach?.();
      const done = await packGroup(database, subjectUid, group.pieces, options.codec);
      if (done === undefined) continue;
      packed++;
      report.packs++;
      report.pieces += group.pieces.length;
      report.bytesBefore += done.before;
      report.bytesAfter += done.after;
    }
    // A pass that packed nothing, or weighed every candidate there was, is the last.
    if (packed === 0 || candidates.length < CANDIDATES) return { ...report, nextFromId: fromId };
  }
}

/** Packs one group in one transaction; undefined when a piece of it went meanwhile. */
async function packGroup(
  database: StoreDatabase,
  subjectUid: string,
  group: readonly PieceFacts[],
  codec: Codec,
): Promise<{ before: number; after: number } | undefined> {
  const ids = group.map((piece) => piece.id);
  // Read and compressed before the transaction (SQLite's one connection stays free meanwhile).
  const rows = await readPieces(database.db, subjectUid, ids);
  if (rows.length !== ids.length) return undefined;
  rows.sort((a, b) => a.id - b.id);
  const plain = decompressPieces(rows);
  const moved = new Map<number, MovedPiece>();
  const parts: Buffer[] = [];
  let length = 0;
  for (const row of rows) {
    const bytes = plain.get(row.id) as Buffer;
    moved.set(row.id, { piece: 0, shift: length });
    parts.push(bytes);
    length += bytes.length;
  }
  const pack = compressPack(Buffer.concat(parts, length), codec);
  const oldest = group.reduce(
    (first, piece) => (piece.created_at < first ? piece.created_at : first),
    group[0]?.created_at as string,
  );
  const since = new Date(Date.parse(oldest) - SKEW_MS).toISOString();
  return inTransaction(
    database,
    async (db) => {
      // Locked (PostgreSQL): a recorder referring to one of them waits, then finds it moved.
      const locked = await readPiecesForUpdate(db, database.capabilities, subjectUid, ids);
      const same =
        locked.length === rows.length &&
        locked.every((row, index) => row.bytes.equals((rows[index] as typeof row).bytes));
      if (!same) return undefined;
      const [packId] = await newPieceIds(db, database.capabilities, 1);
      const target = packId as number;
      await insertPieces(db, [
        {
          id: target,
          subject_uid: subjectUid,
          codec: pack.codec,
          size: length,
          bytes: pack.bytes,
          created_at: oldest,
        },
      ]);
      for (const [id, place] of moved) {
        moved.set(id, { piece: target, shift: place.shift });
        await moveChunks(db, subjectUid, id, target, place.shift);
      }
      for (const call of await manifestsSince(db, subjectUid, since)) {
        const request =
          call.request_manifest === null
            ? undefined
            : moveManifestPieces(decodeManifest(call.request_manifest), moved);
        const response =
          call.response_manifest === null
            ? undefined
            : moveManifestPieces(decodeManifest(call.response_manifest), moved);
        if (request === undefined && response === undefined) continue;
        await setManifests(db, call.id, {
          request_manifest:
            request === undefined ? (call.request_manifest as Buffer) : encodeManifest(request),
          response_manifest:
            response === undefined ? (call.response_manifest as Buffer) : encodeManifest(response),
        });
      }
      await deletePackedPieces(db, subjectUid, ids);
      return {
        before: rows.reduce((sum, row) => sum + row.bytes.length, 0),
        after: pack.bytes.length,
      };
    },
    // A pack lost to a power cut is made again by the next pass.
    { waitForDisk: false },
  );
}

export interface BodyPackingOptions {
  /** A subject is packed once it has recorded nothing for this long. */
  readonly afterMs: number;
  readonly codec: Codec;
  /** Awaited before each pack's transaction (the recorder's quiet gate). */
  readonly beforeEach?: () => Promise<void>;
  readonly onError?: (error: unknown) => void;
}

interface SubjectState {
  /** Bytes of new pieces since its last pass. */
  pending: number;
  timer: NodeJS.Timeout | undefined;
  fromId: number;
}

/**
 * The server's packing: a subject is packed once it has recorded nothing for `afterMs` (all its
 * small pieces), and, while it records, every time it has stored two packs' worth of new bytes
 * (full packs only: the newest pieces wait). One pass at a time; `stop` waits for it.
 */
export class BodyPacking {
  readonly #subjects = new Map<string, SubjectState>();
  #running: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly database: StoreDatabase,
    private readonly options: BodyPackingOptions,
  ) {}

  /** A call of the subject stored `bytes` of new pieces. */
  written(subjectUid: string, bytes: number): void {
    if (this.#stopped) return;
    const state = this.#subjects.get(subjectUid) ?? { pending: 0, timer: undefined, fromId: 0 };
    this.#subjects.set(subjectUid, state);
    state.pending += bytes;
    if (state.timer !== undefined) clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      this.#pass(subjectUid, true);
    }, this.options.afterMs).unref();
    if (state.pending >= 2 * PACK_BYTES) this.#pass(subjectUid, false);
  }

  /** Resolves once the passes queued so far have ended. */
  idle(): Promise<void> {
    return this.#running;
  }

  #pass(subjectUid: string, all: boolean): void {
    const state = this.#subjects.get(subjectUid);
    if (state === undefined) return;
    state.pending = 0;
    this.#running = this.#running.then(async () => {
      if (this.#stopped) return;
      try {
        const done = await packSubject(this.database, subjectUid, {
          codec: this.options.codec,
          all,
          fromId: state.fromId,
          ...(this.options.beforeEach === undefined ? {} : { beforeEach: this.options.beforeEach }),
        });
        state.fromId = done.nextFromId;
      } catch (error) {
        this.options.onError?.(error);
      }
      if (all && state.timer === undefined && state.pending === 0) {
        this.#subjects.delete(subjectUid);
      }
    });
  }

  /** Stops the timers and waits for a pass under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const state of this.#subjects.values()) {
      if (state.timer !== undefined) clearTimeout(state.timer);
    }
    await this.#running;
  }
}
