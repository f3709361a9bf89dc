import type { StoreDatabase } from "../../../store/database.js";
import {
  deadRowsLeft,
  deletePackedPieces,
  deletePacks,
  insertPack,
  lastPack,
  lockPacks,
  packsFrom,
  readPacks,
  readPieces,
  readPiecesForUpdate,
  smallPieces,
  vacuumPiecesAndPacks,
  type PackFacts,
  type PieceFacts,
} from "../../../store/repositories/recorded-bodies.js";
import { inTransaction } from "../../../store/transaction.js";
import { compressPack, decompressPieces, type Codec } from "./compression.js";
import { decodePackList, encodePackList } from "./pack-list.js";

/**
 * Packing (docs/server/recorded-calls.md, "How recorded bytes are stored", 5): a subject's
 * small pieces (each call's new bytes, 1–10 KiB) are joined into packs of up to PACK_BYTES,
 * compressed as one frame, so compression has the context of the calls before (where it pays:
 * a session's turns repeat its words, tool names and event framing) and a long request is read
 * from a few frames, not one per call.
 *
 * A packed piece keeps its id: the pack lists its pieces and sizes, and its id is the largest
 * of them (stored-pieces.ts finds a piece's pack from that). So a pack is one transaction that
 * writes the pack and deletes the pieces it holds, and nothing else: no call's manifest and no
 * chunk row is rewritten (on PostgreSQL every rewritten row is a dead tuple until a vacuum).
 * A subject's packs hold runs of ids that do not overlap: a pack takes the subject's pieces
 * after its last pack (that last pack joined again while it is short), and its transaction
 * checks that the last pack is still the one it started from. A piece committed after a pack of
 * later ids (PostgreSQL numbers pieces before their commit, and several servers record one
 * subject) is a stray: the next pass writes the pack whose run holds its id again, with it.
 */

/** The largest pack, before compression (256 KiB packs stored 15 % more on the bench's session). */
export const PACK_BYTES = 1024 * 1024;
/** Pieces this small are packed. */
export const SMALL_PIECE = PACK_BYTES / 2;
/**
 * A last pack this small is joined again with the pieces after it (an idle pass packs what a
 * subject has, however little): small frames compress worse, and what a joining frees is
 * bounded by this.
 */
const REJOIN_BELOW = PACK_BYTES / 4;
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
  /**
   * A pack or piece it read changed before its transaction (another server packed, a prune):
   * what it left waits for a later pass.
   */
  interrupted: boolean;
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
  /** Awaited before each pack's transaction (the recorder's quiet gate). */
  readonly beforeEach?: () => Promise<void>;
}

/**
 * A pack to write: the subject's short last pack (joined again) and pieces after it, or (a
 * stray's repair) a pack and strays of its run, written again under the same id.
 */
interface Group {
  readonly rejoin: PackFacts | undefined;
  readonly pieces: PieceFacts[];
  readonly full: boolean;
  readonly repair?: true;
}

/** Groups of at most PACK_BYTES, in id order, the first starting with `rejoin`; the last may be short. */
function groupsOf(rejoin: PackFacts | undefined, pieces: readonly PieceFacts[]): Group[] {
  const groups: Group[] = [];
  let current: Group = { rejoin, pieces: [], full: false };
  let bytes = rejoin?.size ?? 0;
  for (const piece of pieces) {
    if (bytes > 0 && bytes + piece.size > PACK_BYTES) {
      groups.push({ ...current, full: true });
      current = { rejoin: undefined, pieces: [], full: false };
      bytes = 0;
    }
    current.pieces.push(piece);
    bytes += piece.size;
  }
  if (current.pieces.length > 0) groups.push(current);
  return groups;
}

/**
 * Packs a subject's small pieces; returns what it did. `verbatim serve` runs it in the
 * background (BodyPacking); tests and the bench call it.
 */
export async function packSubject(
  database: StoreDatabase,
  subjectUid: string,
  options: PackOptions,
): Promise<PackReport> {
  const report: PackReport = {
    packs: 0,
    pieces: 0,
    bytesBefore: 0,
    bytesAfter: 0,
    interrupted: false,
  };
  const before = options.before ?? new Date(Date.now() + 1000).toISOString();
  const add = (group: Group, done: { before: number; after: number }): void => {
    report.packs++;
    report.pieces += group.pieces.length;
    report.bytesBefore += done.before;
    report.bytesAfter += done.after;
  };
  for (const group of await strayGroups(database, subjectUid, before)) {
    await options.beforeEach?.();
    const done = await packGroup(database, subjectUid, group, undefined, options.codec);
    if (done === undefined) report.interrupted = true;
    else add(group, done);
  }
  for (;;) {
    const last = await lastPack(database.db, subjectUid);
    const candidates = await smallPieces(
      database.db,
      subjectUid,
      { smallerThan: SMALL_PIECE, before, fromId: (last?.id ?? 0) + 1 },
      CANDIDATES,
    );
    const rejoin = last !== undefined && last.size < REJOIN_BELOW ? last : undefined;
    /** The subject's last pack, as each group's transaction must find it. */
    let previous = last?.id;
    let packed = 0;
    for (const group of groupsOf(rejoin, candidates)) {
      const units = group.pieces.length + (group.rejoin === undefined ? 0 : 1);
      // Left for a later pass.
      if (units < 2 || (!group.full && options.all === false)) break;
      await options.beforeEach?.();
      const done = await packGroup(database, subjectUid, group, previous, options.codec);
      // Changed meanwhile (another server packed, a prune): a later pass goes on from there.
      if (done === undefined) return { ...report, interrupted: true };
      previous = done.id;
      packed++;
      add(group, done);
    }
    if (packed === 0 || candidates.length < CANDIDATES) return report;
  }
}

/**
 * The subject's strays (small pieces of ids below its last pack's, committed after the pack of
 * their run), each with the pack whose run holds it: (previous pack's id, pack's id].
 */
async function strayGroups(
  database: StoreDatabase,
  subjectUid: string,
  before: string,
): Promise<Group[]> {
  const last = await lastPack(database.db, subjectUid);
  if (last === undefined) return [];
  const strays = await smallPieces(
    database.db,
    subjectUid,
    { smallerThan: SMALL_PIECE, before, fromId: 0, belowId: last.id },
    CANDIDATES,
  );
  const groups: Group[] = [];
  let index = 0;
  while (index < strays.length) {
    const [pack] = await packsFrom(database.db, subjectUid, (strays[index] as PieceFacts).id, 1);
    if (pack === undefined) break;
    const pieces: PieceFacts[] = [];
    for (; index < strays.length && (strays[index] as PieceFacts).id < pack.id; index++) {
      pieces.push(strays[index] as PieceFacts);
    }
    groups.push({ rejoin: pack, pieces, full: true, repair: true });
  }
  return groups;
}

/**
 * Packs one group in one transaction; undefined when a piece or pack of it changed meanwhile.
 * `previous`: the subject's last pack as the group was chosen (not checked for a repair).
 */
async function packGroup(
  database: StoreDatabase,
  subjectUid: string,
  group: Group,
  previous: number | undefined,
  codec: Codec,
): Promise<{ id: number; before: number; after: number } | undefined> {
  const ids = group.pieces.map((piece) => piece.id);
  // Read and compressed before the transaction (SQLite's one connection stays free meanwhile).
  const rows = await readPieces(database.db, subjectUid, ids);
  if (rows.length !== ids.length) return undefined;
  rows.sort((a, b) => a.id - b.id);
  const entries: { id: number; size: number; bytes: Buffer }[] = [];
  let before = 0;
  if (group.rejoin !== undefined) {
    const [packed] = await readPacks(database.db, subjectUid, [group.rejoin.id]);
    if (packed === undefined || !Buffer.from(packed.pieces).equals(group.rejoin.pieces)) {
      return undefined;
    }
    const bytes = decompressPieces([packed]).get(packed.id) as Buffer;
    for (const piece of decodePackList(packed.id, packed.size, packed.pieces)) {
      entries.push({ ...piece, bytes: bytes.subarray(piece.shift, piece.shift + piece.size) });
    }
    before += packed.bytes.length;
  }
  const plain = decompressPieces(rows);
  for (const row of rows) {
    entries.push({ id: row.id, size: row.size, bytes: plain.get(row.id) as Buffer });
    before += row.bytes.length;
  }
  // A repair's strays go between the pieces of the pack they join.
  entries.sort((a, b) => a.id - b.id);
  const list = entries.map(({ id, size }) => ({ id, size }));
  const parts = entries.map((entry) => entry.bytes);
  const length = list.reduce((sum, piece) => sum + piece.size, 0);
  const pack = compressPack(Buffer.concat(parts, length), codec);
  const id = (list.at(-1) as { id: number }).id;
  const times = [...group.pieces.map((piece) => piece.created_at)];
  if (group.rejoin !== undefined) times.push(group.rejoin.created_at);
  const oldest = times.reduce((first, time) => (time < first ? time : first));
  return inTransaction(
    database,
    async (db) => {
      // Locked (PostgreSQL): a recorder or prune naming one of them waits, then finds it packed.
      const locked = await readPiecesForUpdate(db, database.capabilities, subjectUid, ids);
      // In id order, as `rows` (a read by ids comes back in any order, a partitioned table's too).
      locked.sort((a, b) => a.id - b.id);
      const same =
        locked.length === rows.length &&
        locked.every((row, index) => row.bytes.equals((rows[index] as typeof row).bytes));
      if (!same) return undefined;
      if (group.rejoin !== undefined) {
        const held = [group.rejoin.id];
        const kept = await lockPacks(db, database.capabilities, subjectUid, held, "update");
        if (kept.length !== 1) return undefined;
        // The same pack still: a repair keeps its id, so another server's may have rewritten it.
        const [now] = await packsFrom(db, subjectUid, group.rejoin.id, 1);
        if (now?.id !== group.rejoin.id || !Buffer.from(now.pieces).equals(group.rejoin.pieces)) {
          return undefined;
        }
      }
      // Runs of ids that do not overlap: no pack was written since this one's were chosen.
      if (group.repair !== true && (await lastPack(db, subjectUid))?.id !== previous) {
        return undefined;
      }
      // Before the insert: a repair's pack has the id of the one it replaces.
      if (group.rejoin !== undefined) await deletePacks(db, subjectUid, [group.rejoin.id]);
      await insertPack(db, {
        id,
        subject_uid: subjectUid,
        codec: pack.codec,
        size: length,
        created_at: oldest,
        pieces: encodePackList(list),
        bytes: pack.bytes,
      });
      await deletePackedPieces(db, subjectUid, ids);
      return { id, before, after: pack.bytes.length };
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
  /** Passes queued and not ended. */
  queued: number;
  /** Passes in a row that failed or were interrupted. */
  retries: number;
}

/**
 * A pass that failed or was interrupted is tried again (a subject gone idle records nothing
 * that would start one), after `afterMs` × 4, × 16, … (at most RETRY_MAX_MS), this often.
 */
const RETRIES = 5;
const RETRY_MAX_MS = 10 * 60_000;

/**
 * PostgreSQL: what packing leaves dead (the pieces packed, the packs joined again) is vacuumed
 * after passes that packed, at most once a VACUUM_EVERY_MS, so later pieces and packs take its
 * space and an emptied end of the table is given back (an autovacuum may come minutes later, or
 * never when it is off). Both tables are small or written only at their end, so a vacuum reads
 * little: the pieces waiting to be packed, and the pages written since the last one.
 */
const VACUUM_EVERY_MS = 1000;
/**
 * A vacuum cannot remove rows a transaction open meanwhile may still see (a long report, a
 * backup): while it leaves dead rows, it runs again, 2, 4, 8 … seconds later, this many times.
 */
const VACUUM_AGAIN = 8;

/**
 * The server's packing: a subject is packed once it has recorded nothing for `afterMs` (all its
 * small pieces), and, while it records, every time it has stored two packs' worth of new bytes
 * (full packs only: the newest pieces wait). One pass at a time; `stop` waits for it.
 */
export class BodyPacking {
  readonly #subjects = new Map<string, SubjectState>();
  #running: Promise<void> = Promise.resolve();
  #stopped = false;
  #vacuumDue = false;
  #vacuumedAt = 0;
  /** Vacuums in a row that left dead rows. */
  #vacuumsShort = 0;
  #vacuumTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly database: StoreDatabase,
    private readonly options: BodyPackingOptions,
  ) {}

  /** A call of the subject stored `bytes` of new pieces. */
  written(subjectUid: string, bytes: number): void {
    if (this.#stopped) return;
    const state = this.#subjects.get(subjectUid) ?? {
      pending: 0,
      timer: undefined,
      queued: 0,
      retries: 0,
    };
    this.#subjects.set(subjectUid, state);
    state.pending += bytes;
    this.#later(subjectUid, state, this.options.afterMs);
    if (state.pending >= 2 * PACK_BYTES) this.#pass(subjectUid, state, false);
  }

  /** An idle pass of the subject in `ms` (instead of one set before). */
  #later(subjectUid: string, state: SubjectState, ms: number): void {
    if (state.timer !== undefined) clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      this.#pass(subjectUid, state, true);
    }, ms).unref();
  }

  /** Resolves once the passes queued so far have ended. */
  idle(): Promise<void> {
    return this.#running;
  }

  /**
   * Queues a pass of the subject. A subject's state is forgotten only once nothing is left to
   * run for it (no pass queued, no timer set, nothing written since), so every write is followed
   * by a pass that starts after it, however passes and writes interleave.
   */
  #pass(subjectUid: string, state: SubjectState, all: boolean): void {
    state.pending = 0;
    state.queued++;
    this.#queue(async () => {
      let finished = false;
      try {
        const done = await packSubject(this.database, subjectUid, {
          codec: this.options.codec,
          all,
          ...(this.options.beforeEach === undefined ? {} : { beforeEach: this.options.beforeEach }),
        });
        if (done.packs > 0 && this.database.capabilities.dialect === "postgres") {
          this.#vacuumDue = true;
          this.#vacuumsShort = 0;
        }
        finished = !done.interrupted;
      } catch (error) {
        this.options.onError?.(error);
      }
      state.retries = finished ? 0 : state.retries + 1;
      if (!finished && state.retries <= RETRIES && state.timer === undefined && !this.#stopped) {
        this.#later(
          subjectUid,
          state,
          Math.min(this.options.afterMs * 4 ** state.retries, RETRY_MAX_MS),
        );
      }
      state.queued--;
      if (
        all &&
        state.timer === undefined &&
        state.pending === 0 &&
        state.queued === 0 &&
        this.#subjects.get(subjectUid) === state
      ) {
        this.#subjects.delete(subjectUid);
      }
      await this.#vacuum();
    });
  }

  #queue(work: () => Promise<void>): void {
    this.#running = this.#running.then(async () => {
      if (!this.#stopped) await work();
    });
  }

  async #vacuum(): Promise<void> {
    if (!this.#vacuumDue || this.#vacuumTimer !== undefined) return;
    const wait = this.#vacuumedAt + VACUUM_EVERY_MS * 2 ** this.#vacuumsShort - Date.now();
    if (wait > 0) {
      this.#vacuumTimer = setTimeout(() => {
        this.#vacuumTimer = undefined;
        this.#queue(() => this.#vacuum());
      }, wait).unref();
      return;
    }
    this.#vacuumDue = false;
    try {
      await this.options.beforeEach?.();
      await vacuumPiecesAndPacks(this.database.db);
      if ((await deadRowsLeft(this.database.db)) > 0 && this.#vacuumsShort < VACUUM_AGAIN) {
        this.#vacuumsShort++;
        this.#vacuumDue = true;
      }
    } catch (error) {
      this.options.onError?.(error);
    }
    this.#vacuumedAt = Date.now();
    // Its next turn, when it left dead rows.
    if (this.#vacuumDue) await this.#vacuum();
  }

  /** Stops the timers and waits for a pass under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const state of this.#subjects.values()) {
      if (state.timer !== undefined) clearTimeout(state.timer);
    }
    if (this.#vacuumTimer !== undefined) clearTimeout(this.#vacuumTimer);
    await this.#running;
  }
}
