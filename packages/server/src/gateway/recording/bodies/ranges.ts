/**
 * A stored body is a list of ranges of pieces (docs/server/recorded-calls.md, "How recorded
 * bytes are stored"): the body is the ranges' bytes, in order.
 */
export interface PieceRange {
  /** The piece's id (per subject). */
  readonly piece: number;
  /** Where the range starts in the piece's bytes (as stored before compression). */
  readonly offset: number;
  readonly length: number;
}

/** The body's length. */
export function lengthOf(ranges: readonly PieceRange[]): number {
  let total = 0;
  for (const range of ranges) total += range.length;
  return total;
}

/** Appends a range, joining it to the last when it continues it in the same piece. */
export function pushRange(ranges: PieceRange[], range: PieceRange): void {
  if (range.length === 0) return;
  const last = ranges[ranges.length - 1];
  if (
    last !== undefined &&
    last.piece === range.piece &&
    last.offset + last.length === range.offset
  ) {
    ranges[ranges.length - 1] = {
      piece: last.piece,
      offset: last.offset,
      length: last.length + range.length,
    };
  } else {
    ranges.push(range);
  }
}

/** The ranges of bytes [start, end) of the body `ranges` describe. */
export function sliceRanges(
  ranges: readonly PieceRange[],
  start: number,
  end: number,
): PieceRange[] {
  const out: PieceRange[] = [];
  let position = 0;
  for (const range of ranges) {
    const rangeEnd = position + range.length;
    if (rangeEnd > start && position < end) {
      const from = Math.max(start, position);
      const to = Math.min(end, rangeEnd);
      pushRange(out, {
        piece: range.piece,
        offset: range.offset + (from - position),
        length: to - from,
      });
    }
    position = rangeEnd;
    if (position >= end) break;
  }
  return out;
}

/** The distinct pieces the ranges read, ascending. */
export function piecesOf(ranges: readonly PieceRange[]): number[] {
  return [...new Set(ranges.map((range) => range.piece))].sort((a, b) => a - b);
}
