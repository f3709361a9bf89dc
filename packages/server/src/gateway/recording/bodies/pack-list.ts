import { VerbatimError } from "verbatim-llm/core";

/**
 * The list a pack keeps of the pieces it holds (packing.ts): in id order, each piece's id and
 * size, so a piece's bytes are found in the pack's by the sizes before it. Binary: a version
 * byte, the count, then per piece (id − the previous id, size) as unsigned LEB128 numbers.
 */

/** A piece a pack holds, and where its bytes start in the pack's. */
export interface PackedPiece {
  readonly id: number;
  readonly size: number;
  readonly shift: number;
}

const VERSION = 1;

function pushNumber(out: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** `pieces` in ascending id order. */
export function encodePackList(pieces: readonly { id: number; size: number }[]): Buffer {
  const out: number[] = [];
  pushNumber(out, VERSION);
  pushNumber(out, pieces.length);
  let previous = 0;
  for (const piece of pieces) {
    if (piece.id <= previous) throw new Error(`pack list: piece ${piece.id} is out of order`);
    pushNumber(out, piece.id - previous);
    pushNumber(out, piece.size);
    previous = piece.id;
  }
  return Buffer.from(out);
}

function corrupt(packId: number, why: string): VerbatimError {
  return new VerbatimError(
    "internal_error",
    `the list of pieces of recorded-body pack ${packId} is unreadable: ${why}`,
    {
      where: `ai_gateway_body_packs ${packId}`,
      hint: "The row was changed outside verbatim or written by a newer version; restore it from a backup",
    },
  );
}

/** The pieces of pack `packId` (its row's `pieces`), checked against its id and size. */
export function decodePackList(packId: number, size: number, bytes: Uint8Array): PackedPiece[] {
  let position = 0;
  const next = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = bytes[position++];
      if (byte === undefined) throw corrupt(packId, "it ends in the middle of a number");
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
      if (scale > 2 ** 56) throw corrupt(packId, "a number is too long");
    }
  };
  const version = next();
  if (version !== VERSION) throw corrupt(packId, `version ${version} is not ${VERSION}`);
  const count = next();
  const pieces: PackedPiece[] = [];
  let id = 0;
  let shift = 0;
  for (let index = 0; index < count; index++) {
    id += next();
    const pieceSize = next();
    pieces.push({ id, size: pieceSize, shift });
    shift += pieceSize;
  }
  if (position !== bytes.length) throw corrupt(packId, "bytes follow its last piece");
  if (shift !== size) throw corrupt(packId, `its pieces hold ${shift} bytes, not ${size}`);
  if (id !== packId) throw corrupt(packId, `its last piece is ${id}, not the pack's id`);
  return pieces;
}
