import { BoundedMap } from "../bounded-map.js";
import type { PieceRange } from "./ranges.js";

/** A call's request as read before: its flat ranges and the pieces they read, decompressed. */
export interface ReadRequest {
  readonly ranges: readonly PieceRange[];
  readonly pieces: ReadonlyMap<number, Buffer>;
  /** The pieces' bytes (decompressed): what the entry counts against the cache's bound. */
  readonly bytes: number;
}

/**
 * The requests of recorded calls read lately, kept across reads by the reader's owner (the
 * console's reads, `GET /ai-gateway/recorded-calls/:id/request`), so that reading a call again,
 * or the next call of its session, does not read and decompress again the pieces it shares
 * with them (docs/server/recorded-calls.md, "How recorded bytes are stored").
 *
 * Why an entry may be used: an entry is a call's ranges with the bytes of the pieces they
 * named when it was read, and those are the call's bytes for as long as it exists, whether the
 * pieces are still stored (`verbatim db prune` keeps a piece a call names, or writes the call
 * flat first) or were joined into a pack (packing.ts, where a piece keeps its id). Piece ids are
 * not names for all time (SQLite numbers a new piece after the largest, packed ones included, so
 * deleting the newest frees its id), so an entry is only used for a call the reader has just
 * seen stored: the call being read (its row was read) or a call its request is a diff of (the
 * chain of its manifests was read). While such a call exists the pieces it names are stored, so
 * none of their ids is above the largest, and only ids above the largest are taken again.
 * Bounded in bytes, least recently read out first.
 */
export class BodyReadCache {
  readonly #calls: BoundedMap<string, ReadRequest>;

  constructor(private readonly maxBytes: number = 32 * 1024 * 1024) {
    this.#calls = new BoundedMap(maxBytes);
  }

  /** What it holds now (calls and counted bytes). */
  get size(): { readonly calls: number; readonly bytes: number } {
    return { calls: this.#calls.size.entries, bytes: this.#calls.size.bytes };
  }

  /** The call's request as read before (touched: last out), if kept. */
  get(callId: string): ReadRequest | undefined {
    return this.#calls.get(callId);
  }

  /** Keeps a call's request (its ranges, and each piece they read). */
  add(callId: string, ranges: readonly PieceRange[], pieces: ReadonlyMap<number, Buffer>): void {
    const kept = new Map<number, Buffer>();
    let bytes = 0;
    for (const range of ranges) {
      const piece = pieces.get(range.piece);
      if (piece === undefined) return;
      if (kept.has(range.piece)) continue;
      // A piece read from a pack is a view of the whole pack: kept alone, it would hold it.
      kept.set(
        range.piece,
        piece.buffer.byteLength > 2 * piece.length ? Buffer.from(piece) : piece,
      );
      bytes += piece.length;
    }
    // One request does not push out every other.
    if (bytes > this.maxBytes / 4) return;
    this.#calls.set(callId, { ranges, pieces: kept, bytes }, bytes);
  }
}
