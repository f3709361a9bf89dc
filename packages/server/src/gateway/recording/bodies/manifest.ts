import { VerbatimError } from "verbatim-llm/core";
import { lengthOf, pushRange, sliceRanges, type PieceRange } from "./ranges.js";

/**
 * A stored body's manifest (docs/server/recorded-calls.md, "How recorded bytes are stored"),
 * in one of two forms:
 * - flat: the body's ranges of pieces, whole;
 * - diff: the bytes `[0, head)` and `[tailStart, end)` of a base body (another call's request,
 *   named in the call's row), with `ranges` between them. A session's next request is its
 *   previous one with the new turns in the middle: its manifest is a few ranges, however long
 *   the history.
 * Binary: a version byte, then unsigned LEB128 numbers; piece ids once each, ascending, as
 * differences, and each range as (index of its piece, offset, length).
 */
export type Manifest =
  | { readonly kind: "flat"; readonly length: number; readonly ranges: readonly PieceRange[] }
  | {
      readonly kind: "diff";
      readonly length: number;
      readonly head: number;
      readonly tailStart: number;
      readonly baseLength: number;
      readonly ranges: readonly PieceRange[];
    };

const VERSION = 1;

class Writer {
  readonly #bytes: number[] = [];
  number(value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.#bytes.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.#bytes.push(rest);
  }
  done(): Buffer {
    return Buffer.from(this.#bytes);
  }
}

class Reader {
  #position = 0;
  constructor(private readonly bytes: Uint8Array) {}
  number(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.bytes[this.#position++];
      if (byte === undefined) throw corrupt("it ends in the middle of a number");
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
      if (scale > 2 ** 56) throw corrupt("a number is too long");
    }
  }
  get atEnd(): boolean {
    return this.#position === this.bytes.length;
  }
}

function corrupt(why: string): VerbatimError {
  return new VerbatimError("internal_error", `a recorded body's manifest is unreadable: ${why}`, {
    hint: "The row was changed outside verbatim or written by a newer version; restore it from a backup",
  });
}

export function encodeManifest(manifest: Manifest): Buffer {
  const writer = new Writer();
  writer.number(VERSION);
  writer.number(manifest.kind === "flat" ? 0 : 1);
  writer.number(manifest.length);
  if (manifest.kind === "diff") {
    writer.number(manifest.head);
    writer.number(manifest.tailStart);
    writer.number(manifest.baseLength);
  }
  const pieces = [...new Set(manifest.ranges.map((range) => range.piece))].sort((a, b) => a - b);
  const indexOf = new Map(pieces.map((piece, index) => [piece, index]));
  writer.number(pieces.length);
  let previous = 0;
  for (const piece of pieces) {
    writer.number(piece - previous);
    previous = piece;
  }
  writer.number(manifest.ranges.length);
  for (const range of manifest.ranges) {
    writer.number(indexOf.get(range.piece) as number);
    writer.number(range.offset);
    writer.number(range.length);
  }
  return writer.done();
}

export function decodeManifest(bytes: Uint8Array): Manifest {
  const reader = new Reader(bytes);
  const version = reader.number();
  if (version !== VERSION) throw corrupt(`version ${version} is not ${VERSION}`);
  const kind = reader.number();
  if (kind !== 0 && kind !== 1) throw corrupt(`kind ${kind} is neither flat (0) nor diff (1)`);
  const length = reader.number();
  const head = kind === 1 ? reader.number() : 0;
  const tailStart = kind === 1 ? reader.number() : 0;
  const baseLength = kind === 1 ? reader.number() : 0;
  const pieceCount = reader.number();
  const pieces: number[] = [];
  let previous = 0;
  for (let index = 0; index < pieceCount; index++) {
    previous += reader.number();
    pieces.push(previous);
  }
  const rangeCount = reader.number();
  const ranges: PieceRange[] = [];
  for (let index = 0; index < rangeCount; index++) {
    const piece = pieces[reader.number()];
    if (piece === undefined) throw corrupt("a range names a piece it does not list");
    ranges.push({ piece, offset: reader.number(), length: reader.number() });
  }
  if (!reader.atEnd) throw corrupt("bytes follow its last range");
  const middle = lengthOf(ranges);
  if (kind === 0) {
    if (middle !== length) throw corrupt(`its ranges hold ${middle} bytes, not ${length}`);
    return { kind: "flat", length, ranges };
  }
  if (
    head > tailStart ||
    tailStart > baseLength ||
    head + middle + (baseLength - tailStart) !== length
  ) {
    throw corrupt("its base's head and tail do not add up to its length");
  }
  return { kind: "diff", length, head, tailStart, baseLength, ranges };
}

/** The flat ranges of a diff, given its base's flat ranges. */
export function applyDiff(
  base: readonly PieceRange[],
  diff: Manifest & { kind: "diff" },
): PieceRange[] {
  const baseLength = lengthOf(base);
  if (baseLength !== diff.baseLength) {
    throw corrupt(
      `its base holds ${baseLength} bytes, not the ${diff.baseLength} it was written against`,
    );
  }
  const out = sliceRanges(base, 0, diff.head);
  for (const range of diff.ranges) pushRange(out, range);
  for (const range of sliceRanges(base, diff.tailStart, baseLength)) pushRange(out, range);
  return out;
}

/** Where packing moved a piece: into `piece`, `shift` bytes in. */
export interface MovedPiece {
  readonly piece: number;
  readonly shift: number;
}

/**
 * The manifest with the ranges of moved pieces naming where their bytes are now (adjacent
 * ranges joined); undefined when it names none of them.
 */
export function moveManifestPieces(
  manifest: Manifest,
  moved: ReadonlyMap<number, MovedPiece>,
): Manifest | undefined {
  if (!manifest.ranges.some((range) => moved.has(range.piece))) return undefined;
  const ranges: PieceRange[] = [];
  for (const range of manifest.ranges) {
    const to = moved.get(range.piece);
    pushRange(
      ranges,
      to === undefined
        ? range
        : { piece: to.piece, offset: range.offset + to.shift, length: range.length },
    );
  }
  return { ...manifest, ranges };
}
