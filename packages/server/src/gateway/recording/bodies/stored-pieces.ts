import type { Kysely } from "kysely";
import type { DialectCapabilities } from "../../../store/capabilities.js";
import {
  lockPacks,
  packsFrom,
  piecesPresent,
  readPacks,
  readPieces,
  type PackFacts,
} from "../../../store/repositories/recorded-bodies.js";
import type { StoreSchema } from "../../../store/schema.js";
import { decompressPieces } from "./compression.js";
import { decodePackList, type PackedPiece } from "./pack-list.js";

/**
 * Where a stored piece's bytes are (docs/server/recorded-calls.md, "How recorded bytes are
 * stored"): in a row of its own, or, once packed, in the pack that holds it (packing.ts). A
 * piece keeps its id in its pack, a pack's id is the largest it holds, and a subject's packs
 * hold runs of ids that do not overlap, so the pack of piece X is the subject's first pack at or
 * after X, when X is one of its pieces. Manifests and chunk rows name pieces, never packs, and
 * so never change when pieces are packed.
 */

/** Packs looked at per statement. */
const PACKS_PER_STATEMENT = 8;

interface Located {
  readonly pack: PackFacts;
  readonly piece: PackedPiece;
}

/** For each of `missing` (ascending ids) that a pack holds: the pack and its place there. */
async function locatePacked(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  missing: readonly number[],
): Promise<Map<number, Located>> {
  const out = new Map<number, Located>();
  let index = 0;
  while (index < missing.length) {
    const packs = await packsFrom(db, subjectUid, missing[index] as number, PACKS_PER_STATEMENT);
    for (const pack of packs) {
      const pieces = new Map(
        decodePackList(pack.id, pack.size, pack.pieces).map((piece) => [piece.id, piece]),
      );
      // Every id up to the pack's own is either in it or in no pack.
      for (; index < missing.length && (missing[index] as number) <= pack.id; index++) {
        const piece = pieces.get(missing[index] as number);
        if (piece !== undefined) out.set(piece.id, { pack, piece });
      }
    }
    if (packs.length < PACKS_PER_STATEMENT) break;
  }
  return out;
}

const ascending = (ids: Iterable<number>): number[] => [...ids].sort((a, b) => a - b);

/**
 * The bytes (decompressed) of the subject's pieces among `ids`, and of every other piece of the
 * packs read for them (a reader asks for those next); an id that is gone is left out. The packs
 * are looked at first: most of a long request's pieces are packed, and a piece packed between
 * the two reads is missing (its reader reads the call again, body-reader.ts).
 */
export async function readPieceBytes(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly number[],
): Promise<Map<number, Buffer>> {
  const wanted = ascending(new Set(ids));
  const located =
    wanted.length === 0 ? new Map<number, Located>() : await locatePacked(db, subjectUid, wanted);
  const own = wanted.filter((id) => !located.has(id));
  const out =
    own.length === 0
      ? new Map<number, Buffer>()
      : decompressPieces(await readPieces(db, subjectUid, own));
  const packIds = ascending(new Set([...located.values()].map((place) => place.pack.id)));
  const rows = await readPacks(db, subjectUid, packIds);
  // Decompressed apart from the pieces: a pack's id is also one of its pieces' ids.
  const plain = decompressPieces(rows);
  for (const row of rows) {
    const bytes = plain.get(row.id) as Buffer;
    for (const piece of decodePackList(row.id, row.size, row.pieces)) {
      if (!out.has(piece.id)) {
        out.set(piece.id, bytes.subarray(piece.shift, piece.shift + piece.size));
      }
    }
  }
  return out;
}

/**
 * How many of the subject's pieces among `ids` are stored, in rows of their own or in packs,
 * each row locked against its deletion until the transaction ends (PostgreSQL): a pack or prune
 * waits for the caller's commit, and a piece packed meanwhile is found in its pack.
 */
export async function countStoredPieces(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  ids: readonly number[],
): Promise<number> {
  const present = new Set(await piecesPresent(db, capabilities, subjectUid, ids));
  const missing = ascending(new Set(ids.filter((id) => !present.has(id))));
  if (missing.length === 0) return present.size;
  // Located, then locked: a pack joined into a larger one between the two is looked up again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const located = await locatePacked(db, subjectUid, missing);
    const packIds = ascending(new Set([...located.values()].map((place) => place.pack.id)));
    const locked = await lockPacks(db, capabilities, subjectUid, packIds, "key share");
    if (locked.length === packIds.length) return present.size + located.size;
  }
  return present.size;
}
