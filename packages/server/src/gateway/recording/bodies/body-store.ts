import type { Kysely } from "kysely";
import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../../store/database.js";
import type { StoreSchema } from "../../../store/schema.js";
import {
  countPieces,
  findChunks,
  insertChunks,
  insertPieces,
  lockCall,
  newPieceIds,
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
import { encodeManifest } from "./manifest.js";
import type { PieceRange } from "./ranges.js";
import { RecentBodies } from "./recent-bodies.js";

/**
 * Writes a recorded call's bodies as pieces (docs/server/recorded-calls.md, "How recorded bytes
 * are stored"). Two steps around the caller's write transaction:
 * - `prepare`, before it: the request's diff against a recent body of the subject, the chunk
 *   lookups, the new pieces compressed (no write, nothing held);
 * - `write`, inside it: checks that what the bodies refer to is still stored (PostgreSQL locks
 *   it against a concurrent prune), numbers and inserts the new pieces and their chunks, and
 *   returns the row's columns. When something referred to is gone it throws `StaleBodies`: the
 *   caller prepares again with `fresh` (no base, no lookups) and writes that.
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
  readonly base: BaseMatch | undefined;
  readonly requestEncoded: EncodedBody;
  readonly responseEncoded: EncodedBody;
  readonly pieces: readonly StoredPiece[];
  /** Stored pieces the bodies refer to outside their base (found by the chunk index). */
  readonly knownPieces: readonly number[];
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
}

/** Yields to the event loop between the pieces of a long body. */
const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class BodyStore {
  readonly recent: RecentBodies;
  readonly #codec: Codec;

  constructor(
    private readonly database: StoreDatabase,
    options: BodyStoreOptions = {},
  ) {
    this.#codec = codecOf(options.compression ?? "auto");
    this.recent = new RecentBodies(options.recentBytes);
  }

  /**
   * `db`: where the chunk index is read (the store by default; a caller inside a transaction
   * passes it, SQLite having one connection).
   */
  async prepare(
    subjectUid: string,
    request: Buffer,
    response: Buffer,
    fresh = false,
    db: Kysely<StoreSchema> = this.database.db,
  ): Promise<PreparedBodies> {
    const base = fresh ? undefined : bestBase(request, this.recent.of(subjectUid));
    const requestChunks = newChunks(request, base);
    const responseChunks = newChunks(response, undefined);
    const known = new Map<string, KnownChunk>();
    const hashes = [...requestChunks, ...responseChunks].map((chunk) => chunk.hash);
    if (!fresh && hashes.length > 0) {
      for (const row of await findChunks(db, subjectUid, hashes)) {
        known.set(row.hash.toString("hex"), { piece: row.piece_id, offset: row.piece_offset });
      }
    }
    const requestPieces = new FreshPieces(known);
    const requestEncoded = requestPieces.encode(request, base, requestChunks);
    const requestFresh = requestPieces.finish();
    const responsePieces = new FreshPieces(known, requestFresh.length);
    const responseEncoded = responsePieces.encode(response, undefined, responseChunks);
    const stored: StoredPiece[] = [];
    for (const piece of [...requestFresh, ...responsePieces.finish()]) {
      if (stored.length > 0) await breathe();
      const packed = compressPiece(piece.bytes, this.#codec);
      stored.push({ ...packed, size: piece.bytes.length, chunks: piece.chunks });
    }
    const referred = [
      ...(requestEncoded.diff?.middle ?? requestEncoded.ranges),
      ...responseEncoded.ranges,
    ];
    const knownPieces = [...new Set(referred.map((range) => range.piece).filter((id) => id > 0))];
    return {
      subjectUid,
      request,
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
    prepared: PreparedBodies,
    createdAt: string,
  ): Promise<{ columns: BodyColumns; remembered: Omit<BaseBody, "callId" | "bytes"> }> {
    const capabilities = this.database.capabilities;
    const { subjectUid, base } = prepared;
    if (base !== undefined && !(await lockCall(db, capabilities, base.base.callId))) {
      throw new StaleBodies();
    }
    const known = prepared.knownPieces;
    if (
      known.length > 0 &&
      (await countPieces(db, capabilities, subjectUid, known)) !== known.length
    ) {
      throw new StaleBodies();
    }
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
    const ranges: PieceRange[] = numberRanges(requestEncoded.ranges, ids);
    const diff = requestEncoded.diff;
    const asDiff = diff !== undefined && diff.base.depth + 1 < MAX_DIFF_DEPTH;
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

  /** After the commit: the request is a base for the subject's next. */
  remember(
    prepared: PreparedBodies,
    callId: string,
    remembered: Omit<BaseBody, "callId" | "bytes">,
  ): void {
    this.recent.add(
      prepared.subjectUid,
      { callId, bytes: prepared.request, ...remembered },
      prepared.base?.base.callId,
    );
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
