import { createHash } from "node:crypto";
import { chunkEnds, MIN_CHUNK } from "./chunker.js";
import { lengthOf, pushRange, sliceRanges, type PieceRange } from "./ranges.js";

/**
 * Cuts a body into what the store already holds and what it does not (docs/server/
 * recorded-calls.md, "How recorded bytes are stored"):
 * 1. against a base (a recent request of the same subject, held in memory): the longest common
 *    head and tail, compared a block at a time; what lies between is the middle;
 * 2. the middle is cut into content-defined chunks, and each chunk the subject stored before
 *    (the chunk index, by SHA-256) is a range of the piece that holds it;
 * 3. the rest is new: one or more new pieces (`fresh`), each at most PIECE_BYTES.
 * Nothing here touches the database: `known` answers the chunk lookups.
 */

/** The largest new piece: a long body is written a piece at a time. */
export const PIECE_BYTES = 256 * 1024;

/** A common head and tail this much shorter than the body is no base worth diffing against. */
const SMALLEST_SHARE = 256;

/** A stored body this process still holds: the base of a later one. */
export interface BaseBody {
  readonly callId: string;
  readonly bytes: Buffer;
  readonly ranges: readonly PieceRange[];
  /** Diffs between this body and the nearest flat manifest (0 when its own is flat). */
  readonly depth: number;
}

/** A chunk as the index keeps it: 16 bytes of its SHA-256. */
export interface ChunkKey {
  readonly hash: Buffer;
  readonly length: number;
}

/** Where the subject holds a chunk. */
export interface KnownChunk {
  readonly piece: number;
  readonly offset: number;
}

/** A new piece, not yet numbered: ranges name it as `-(index + 1)`. */
export interface FreshPiece {
  readonly bytes: Buffer;
  /** Its chunks, by offset in the piece, for the index. */
  readonly chunks: readonly {
    readonly hash: Buffer;
    readonly offset: number;
    readonly length: number;
  }[];
}

export interface EncodedBody {
  readonly length: number;
  /** Flat ranges of the whole body (new pieces as negative placeholders). */
  readonly ranges: PieceRange[];
  /** Set when the body is a diff of `base`: its head and tail lengths in the base. */
  readonly diff?: {
    readonly base: BaseBody;
    readonly head: number;
    readonly tailStart: number;
    readonly middle: PieceRange[];
  };
}

const BLOCK = 4096;

/** Bytes `a` and `b` share from their start. */
export function commonHead(a: Buffer, b: Buffer): number {
  const limit = Math.min(a.length, b.length);
  let at = 0;
  while (at + BLOCK <= limit && a.compare(b, at, at + BLOCK, at, at + BLOCK) === 0) at += BLOCK;
  while (at < limit && a[at] === b[at]) at++;
  return at;
}

/** Bytes `a` and `b` share at their end, at most `limit`. */
export function commonTail(a: Buffer, b: Buffer, limit: number): number {
  let at = 0;
  while (
    at + BLOCK <= limit &&
    a.compare(b, b.length - at - BLOCK, b.length - at, a.length - at - BLOCK, a.length - at) === 0
  ) {
    at += BLOCK;
  }
  while (at < limit && a[a.length - 1 - at] === b[b.length - 1 - at]) at++;
  return at;
}

export interface BaseMatch {
  readonly base: BaseBody;
  readonly head: number;
  readonly tail: number;
}

/** The base among `candidates` sharing the most head and tail with `body`. */
export function bestBase(body: Buffer, candidates: readonly BaseBody[]): BaseMatch | undefined {
  let best: BaseMatch | undefined;
  for (const base of candidates) {
    const head = commonHead(body, base.bytes);
    const tail = commonTail(body, base.bytes, Math.min(body.length, base.bytes.length) - head);
    if (best === undefined || head + tail > best.head + best.tail) best = { base, head, tail };
  }
  if (best === undefined || best.head + best.tail < Math.min(SMALLEST_SHARE, body.length)) {
    return undefined;
  }
  return best;
}

export function chunkHash(bytes: Uint8Array): Buffer {
  return createHash("sha256").update(bytes).digest().subarray(0, 16);
}

export interface Chunk {
  readonly start: number;
  readonly end: number;
  readonly hash: Buffer;
}

/**
 * The chunks worth indexing of the bytes of `body` a match against a base leaves new (the
 * whole body without one); the short last chunk of the region is not one.
 */
export function newChunks(body: Buffer, base: BaseMatch | undefined): Chunk[] {
  const start = base === undefined ? 0 : base.head;
  const end = base === undefined ? body.length : body.length - base.tail;
  const out: Chunk[] = [];
  let from = start;
  for (const to of chunkEnds(body, start, end)) {
    if (to - from >= MIN_CHUNK) {
      out.push({ start: from, end: to, hash: chunkHash(body.subarray(from, to)) });
    }
    from = to;
  }
  return out;
}

/**
 * The new pieces of one body, filled as it is encoded: a chunk that the body brings twice is
 * written once. Ranges name a new piece as
 * `-(index + 1)` until the pieces have ids (`numberRanges`).
 */
export class FreshPieces {
  readonly #parts: Buffer[][] = [];
  readonly #lengths: number[] = [];
  readonly #chunks: { hash: Buffer; offset: number; length: number }[][] = [];
  /** Chunks stored before (by hex hash), and those this call brings, as placeholders. */
  readonly #known: Map<string, KnownChunk>;

  /**
   * `firstIndex`: new pieces another FreshPieces of the same call numbers before these (each
   * body has pieces of its own, so reading a request never decompresses its answer).
   */
  constructor(
    known: ReadonlyMap<string, KnownChunk>,
    private readonly firstIndex = 0,
  ) {
    this.#known = new Map(known);
  }

  /**
   * Encodes `body`: a diff of `base` when one is given, the chunks of its middle that are
   * known as ranges of their pieces, the rest as new bytes.
   */
  encode(body: Buffer, base: BaseMatch | undefined, chunks: readonly Chunk[]): EncodedBody {
    const start = base === undefined ? 0 : base.head;
    const end = base === undefined ? body.length : body.length - base.tail;
    const middle: PieceRange[] = [];
    let at = start;
    for (const chunk of chunks) {
      if (chunk.start > at) this.#add(middle, body, at, chunk.start, undefined);
      const key = chunk.hash.toString("hex");
      const found = this.#known.get(key);
      if (found !== undefined) {
        pushRange(middle, {
          piece: found.piece,
          offset: found.offset,
          length: chunk.end - chunk.start,
        });
      } else {
        this.#known.set(key, this.#add(middle, body, chunk.start, chunk.end, chunk.hash));
      }
      at = chunk.end;
    }
    if (end > at) this.#add(middle, body, at, end, undefined);
    if (base === undefined) return { length: body.length, ranges: middle };
    const baseLength = base.base.bytes.length;
    const tailStart = baseLength - base.tail;
    const ranges = sliceRanges(base.base.ranges, 0, base.head);
    for (const range of middle) pushRange(ranges, range);
    for (const range of sliceRanges(base.base.ranges, tailStart, baseLength)) {
      pushRange(ranges, range);
    }
    if (lengthOf(ranges) !== body.length) throw new Error("encoded ranges do not cover the body");
    return {
      length: body.length,
      ranges,
      diff: { base: base.base, head: base.head, tailStart, middle },
    };
  }

  /** Appends new bytes; returns where the first of them went. */
  #add(
    ranges: PieceRange[],
    body: Buffer,
    from: number,
    to: number,
    chunk: Buffer | undefined,
  ): KnownChunk {
    let first: KnownChunk | undefined;
    let remaining = from;
    while (remaining < to) {
      let index = this.#lengths.length - 1;
      if (index < 0 || (this.#lengths[index] as number) >= PIECE_BYTES) {
        this.#parts.push([]);
        this.#lengths.push(0);
        this.#chunks.push([]);
        index++;
      }
      const offset = this.#lengths[index] as number;
      // A chunk stays in one piece: the index names one piece per chunk.
      const take =
        chunk !== undefined ? to - remaining : Math.min(to - remaining, PIECE_BYTES - offset);
      if (chunk !== undefined)
        (this.#chunks[index] as { hash: Buffer; offset: number; length: number }[]).push({
          hash: chunk,
          offset,
          length: take,
        });
      (this.#parts[index] as Buffer[]).push(body.subarray(remaining, remaining + take));
      const placeholder = { piece: -(this.firstIndex + index + 1), offset };
      first ??= placeholder;
      pushRange(ranges, { ...placeholder, length: take });
      this.#lengths[index] = offset + take;
      remaining += take;
    }
    return first as KnownChunk;
  }

  /** The new pieces, whole. */
  finish(): FreshPiece[] {
    return this.#parts.map((parts, index) => ({
      bytes: Buffer.concat(parts, this.#lengths[index]),
      chunks: this.#chunks[index] as FreshPiece["chunks"],
    }));
  }
}

/** Replaces the placeholders of new pieces by their ids. */
export function numberRanges(ranges: readonly PieceRange[], ids: readonly number[]): PieceRange[] {
  const out: PieceRange[] = [];
  for (const range of ranges) {
    const piece = range.piece < 0 ? (ids[-range.piece - 1] as number) : range.piece;
    pushRange(out, { piece, offset: range.offset, length: range.length });
  }
  return out;
}
