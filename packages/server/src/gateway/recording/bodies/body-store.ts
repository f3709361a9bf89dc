import type { Kysely } from "kysely";
import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../../store/database.js";
import type { StoreSchema } from "../../../store/schema.js";
import {
  findChunks,
  insertChunks,
  insertPieces,
  lockCall,
  newPieceIds,
  readManifestChain,
  type PieceBodyColumns,
} from "../../../store/repositories/recorded-bodies.js";
import { codecOf, compressPiece, type Codec, type Compression } from "./compression.js";
import {
  bestBase,
  FreshPieces,
  newChunks,
  numberRanges,
  type BaseBody,
  type BaseMatch,
  type EncodedBody,
  type FreshPiece,
  type KnownChunk,
} from "./encoder.js";
import { applyDiff, decodeManifest, encodeManifest, type Manifest } from "./manifest.js";
import { BodyPacking } from "./packing.js";
import { lengthOf, piecesOf, pushRange, sliceRanges, type PieceRange } from "./ranges.js";
import { RecentBodies } from "./recent-bodies.js";
import { countStoredPieces } from "./stored-pieces.js";

/**
 * Writes a recorded call's bodies as pieces (docs/server/recorded-calls.md, "How recorded bytes
 * are stored"). Two steps around the caller's write transaction:
 * - `prepare`, before it: the request's diff against a recent body of the subject, the chunk
 *   lookups, the new pieces compressed (no write, nothing held); in two parts,
 *   `prepareRequest` (the pass-through routes run it while the upstream answers) and
 *   `prepareResponse`;
 * - `write`, inside it: checks that what the bodies refer to is still stored (PostgreSQL locks
 *   it against a concurrent prune), numbers and inserts the new pieces and their chunks, and
 *   returns the row's columns. A piece packed meanwhile keeps its id (found in its pack,
 *   stored-pieces.ts); one gone (a prune) is looked up again inside the transaction, and when
 *   something referred to is still gone it throws `StaleBodies`: the caller prepares again with
 *   `fresh` (no base, no lookups) and writes that.
 * A request written flat from its base takes the base's ranges as stored now, not as this
 * process remembers them: a prune may have written the base flat meanwhile.
 */

/** Diffs in a row before a request's manifest is written flat: a read follows at most this many. */
export const MAX_DIFF_DEPTH = 32;

export type BodyColumns = PieceBodyColumns;

interface StoredPiece {
  readonly bytes: Buffer;
  readonly codec: Codec;
  readonly size: number;
  readonly chunks: FreshPiece["chunks"];
}

export interface PreparedBodies {
  readonly subjectUid: string;
  readonly request: Buffer;
  readonly response: Buffer;
  readonly base: BaseMatch | undefined;
  readonly requestEncoded: EncodedBody;
  readonly responseEncoded: EncodedBody;
  readonly pieces: readonly StoredPiece[];
  /** Stored pieces the bodies refer to outside their base (found by the chunk index). */
  readonly knownPieces: readonly number[];
}

/** A request's part of `PreparedBodies`, made before its answer is known. */
export interface PreparedRequest {
  readonly subjectUid: string;
  readonly request: Buffer;
  /** Prepared with no base and no lookups (after a `StaleBodies`). */
  readonly fresh: boolean;
  readonly base: BaseMatch | undefined;
  readonly encoded: EncodedBody;
  readonly pieces: readonly StoredPiece[];
}

/** What a prepared body refers to was deleted meanwhile: prepare it again, fresh. */
export class StaleBodies extends Error {
  constructor() {
    super("a recorded body's base or piece was deleted while it was written");
  }
}

export interface BodyStoreOptions {
  /** How new pieces are compressed (default `auto`). */
  readonly compression?: Compression;
  /** Bytes of recent request bodies held as bases (default 64 MiB). */
  readonly recentBytes?: number;
  /**
   * Packing of small pieces in the background (packing.ts): a subject is packed once it has
   * recorded nothing for `afterMs`. Off when not given.
   */
  readonly packing?: {
    readonly afterMs: number;
    readonly beforeEach?: () => Promise<void>;
    readonly onError?: (error: unknown) => void;
  };
}

/** Yields to the event loop between the pieces of a long body. */
const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The stored chunks among `chunks` (by hex hash). */
async function knownChunks(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  chunks: readonly { readonly hash: Buffer }[],
): Promise<Map<string, KnownChunk>> {
  const known = new Map<string, KnownChunk>();
  if (chunks.length === 0) return known;
  const hashes = chunks.map((chunk) => chunk.hash);
  for (const row of await findChunks(db, subjectUid, hashes)) {
    known.set(row.hash.toString("hex"), { piece: row.piece_id, offset: row.piece_offset });
  }
  return known;
}

/** New pieces compressed, the event loop given a turn between them. */
async function compressPieces(pieces: readonly FreshPiece[], codec: Codec): Promise<StoredPiece[]> {
  const stored: StoredPiece[] = [];
  for (const piece of pieces) {
    if (stored.length > 0) await breathe();
    const packed = compressPiece(piece.bytes, codec);
    stored.push({ ...packed, size: piece.bytes.length, chunks: piece.chunks });
  }
  return stored;
}

export class BodyStore {
  readonly recent: RecentBodies;
  readonly #codec: Codec;
  /** The background packing, when on. */
  readonly packing: BodyPacking | undefined;

  constructor(
    private readonly database: StoreDatabase,
    options: BodyStoreOptions = {},
  ) {
    this.#codec = codecOf(options.compression ?? "auto");
    this.recent = new RecentBodies(options.recentBytes);
    this.packing =
      options.packing === undefined
        ? undefined
        : new BodyPacking(database, { ...options.packing, codec: this.#codec });
  }

  /**
   * Both bodies' preparation (prepareRequest, then prepareResponse). `db`: where the chunk
   * index is read (the store by default; a caller inside a transaction passes it, SQLite
   * having one connection).
   */
  async prepare(
    subjectUid: string,
    request: Buffer,
    response: Buffer,
    fresh = false,
    db: Kysely<StoreSchema> = this.database.db,
  ): Promise<PreparedBodies> {
    return this.prepareResponse(
      await this.prepareRequest(subjectUid, request, fresh, db),
      response,
      db,
    );
  }

  /**
   * The request's part, which needs nothing of the answer: the pass-through routes run it
   * while the upstream answers, so only the answer's part is left on the answer's path.
   */
  async prepareRequest(
    subjectUid: string,
    request: Buffer,
    fresh = false,
    db: Kysely<StoreSchema> = this.database.db,
  ): Promise<PreparedRequest> {
    const base = fresh ? undefined : bestBase(request, this.recent.of(subjectUid));
    const chunks = newChunks(request, base);
    const known = fresh ? new Map<string, KnownChunk>() : await knownChunks(db, subjectUid, chunks);
    const pieces = new FreshPieces(known);
    const encoded = pieces.encode(request, base, chunks);
    return {
      subjectUid,
      request,
      fresh,
      base,
      encoded,
      pieces: await compressPieces(pieces.finish(), this.#codec),
    };
  }

  /** The answer's part, after `prepareRequest`: what `write` takes. */
  async prepareResponse(
    prepared: PreparedRequest,
    response: Buffer,
    db: Kysely<StoreSchema> = this.database.db,
  ): Promise<PreparedBodies> {
    const { subjectUid, request, base } = prepared;
    const chunks = newChunks(response, undefined);
    const known = prepared.fresh
      ? new Map<string, KnownChunk>()
      : await knownChunks(db, subjectUid, chunks);
    const pieces = new FreshPieces(known, prepared.pieces.length);
    const responseEncoded = pieces.encode(response, undefined, chunks);
    const stored = [...prepared.pieces, ...(await compressPieces(pieces.finish(), this.#codec))];
    const requestEncoded = prepared.encoded;
    const referred = [
      ...(requestEncoded.diff?.middle ?? requestEncoded.ranges),
      ...responseEncoded.ranges,
    ];
    const knownPieces = [...new Set(referred.map((range) => range.piece).filter((id) => id > 0))];
    return {
      subjectUid,
      request,
      response,
      base,
      requestEncoded,
      responseEncoded,
      pieces: stored,
      knownPieces,
    };
  }

  /**
   * Inside the call's write transaction: the pieces, their chunks, and the columns of the row.
   * Also returns the request's numbered ranges and depth, for `remember` after the commit.
   */
  async write(
    db: Kysely<StoreSchema>,
    preparedFirst: PreparedBodies,
    createdAt: string,
  ): Promise<{ columns: BodyColumns; remembered: Omit<BaseBody, "callId" | "bytes"> }> {
    const capabilities = this.database.capabilities;
    let prepared = preparedFirst;
    for (let again = false; ; again = true) {
      const { subjectUid, base } = prepared;
      if (base !== undefined && !(await lockCall(db, capabilities, subjectUid, base.base.callId))) {
        throw new StaleBodies();
      }
      const known = prepared.knownPieces;
      if (
        known.length === 0 ||
        (await countStoredPieces(db, capabilities, subjectUid, known)) === known.length
      ) {
        break;
      }
      // Gone (a prune): looked up again inside the transaction, once.
      if (again) throw new StaleBodies();
      prepared = await this.prepare(subjectUid, prepared.request, prepared.response, false, db);
    }
    const { subjectUid } = prepared;
    const ids = await newPieceIds(db, capabilities, prepared.pieces.length);
    await insertPieces(
      db,
      prepared.pieces.map((piece, index) => ({
        id: ids[index] as number,
        subject_uid: subjectUid,
        codec: piece.codec,
        size: piece.size,
        bytes: piece.bytes,
        created_at: createdAt,
      })),
    );
    await insertChunks(
      db,
      prepared.pieces.flatMap((piece, index) =>
        piece.chunks.map((chunk) => ({
          subject_uid: subjectUid,
          hash: chunk.hash,
          piece_id: ids[index] as number,
          piece_offset: chunk.offset,
        })),
      ),
    );
    const { requestEncoded, responseEncoded } = prepared;
    let ranges: PieceRange[] = numberRanges(requestEncoded.ranges, ids);
    const diff = requestEncoded.diff;
    const asDiff = diff !== undefined && diff.base.depth + 1 < MAX_DIFF_DEPTH;
    if (diff !== undefined && !asDiff) {
      const stored = await this.#storedRanges(db, subjectUid, diff.base.callId);
      ranges = sliceRanges(stored, 0, diff.head);
      for (const range of numberRanges(diff.middle, ids)) pushRange(ranges, range);
      for (const range of sliceRanges(stored, diff.tailStart, lengthOf(stored))) {
        pushRange(ranges, range);
      }
      if (lengthOf(ranges) !== requestEncoded.length) throw new StaleBodies();
    }
    const requestManifest = asDiff
      ? encodeManifest({
          kind: "diff",
          length: requestEncoded.length,
          head: diff.head,
          tailStart: diff.tailStart,
          baseLength: diff.base.bytes.length,
          ranges: numberRanges(diff.middle, ids),
        })
      : encodeManifest({ kind: "flat", length: requestEncoded.length, ranges });
    return {
      columns: {
        body_storage: 1,
        request_manifest: requestManifest,
        request_base_call_id: asDiff ? diff.base.callId : null,
        response_manifest: encodeManifest({
          kind: "flat",
          length: responseEncoded.length,
          ranges: numberRanges(responseEncoded.ranges, ids),
        }),
        request_size: requestEncoded.length,
        response_size: responseEncoded.length,
      },
      remembered: { ranges, depth: asDiff ? diff.base.depth + 1 : 0 },
    };
  }

  /**
   * A stored call's request as flat ranges, read inside the transaction, its pieces (or their
   * packs) locked against pruning and repacking (PostgreSQL). Read again when they went between
   * the two statements.
   */
  async #storedRanges(
    db: Kysely<StoreSchema>,
    subjectUid: string,
    callId: string,
  ): Promise<PieceRange[]> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const chain = await readManifestChain(db, subjectUid, callId, MAX_DIFF_DEPTH);
      const diffs: (Manifest & { kind: "diff" })[] = [];
      let ranges: PieceRange[] | undefined;
      for (const link of chain) {
        if (link.request_manifest === null) throw new StaleBodies();
        const manifest = decodeManifest(link.request_manifest);
        if (manifest.kind === "flat") {
          ranges = [...manifest.ranges];
          break;
        }
        diffs.push(manifest);
      }
      if (ranges === undefined) throw new StaleBodies();
      for (const manifest of diffs.reverse()) ranges = applyDiff(ranges, manifest);
      const pieces = piecesOf(ranges);
      const stored = await countStoredPieces(db, this.database.capabilities, subjectUid, pieces);
      if (stored === pieces.length) return ranges;
    }
    throw new StaleBodies();
  }

  /** After the commit: the request is a base for the subject's next. */
  remember(
    prepared: PreparedBodies,
    callId: string,
    remembered: Omit<BaseBody, "callId" | "bytes">,
  ): void {
    const baseId = prepared.base?.base.callId;
    this.recent.add(
      prepared.subjectUid,
      { callId, bytes: prepared.request, ...remembered },
      baseId === undefined ? undefined : (kept) => kept.callId === baseId,
    );
    const stored = prepared.pieces.reduce((sum, piece) => sum + piece.size, 0);
    if (stored > 0) this.packing?.written(prepared.subjectUid, stored);
  }
}

/** A stored body cannot be rebuilt: a piece or base it needs is gone. */
export function bodyGone(callId: string, what: string): VerbatimError {
  return new VerbatimError(
    "internal_error",
    `recorded call ${callId}'s body cannot be rebuilt: ${what}`,
    {
      where: callId,
      hint: "The store was changed outside verbatim; restore it from a backup",
    },
  );
}
