import type { Kysely } from "kysely";
import type { RecordedCallRow } from "../../../store/repositories/recorded-calls.js";
import {
  readCallManifests,
  readManifestChain,
} from "../../../store/repositories/recorded-bodies.js";
import type { StoreSchema } from "../../../store/schema.js";
import { bodyGone, MAX_DIFF_DEPTH } from "./body-store.js";
import { applyDiff, decodeManifest, type Manifest } from "./manifest.js";
import { piecesOf, type PieceRange } from "./ranges.js";
import type { BodyReadCache } from "./read-cache.js";
import { readPieceBytes } from "./stored-pieces.js";

/** What of a recorded call a body read needs. */
export type StoredBodies = Pick<
  RecordedCallRow,
  | "id"
  | "subject_uid"
  | "body_storage"
  | "request_body"
  | "response_body_base64"
  | "request_manifest"
  | "response_manifest"
>;

/**
 * Rebuilds recorded bodies byte for byte (docs/server/recorded-calls.md, "How recorded bytes
 * are stored"). One reader keeps the pieces and flat manifests it read, so reading a session's
 * calls one after the other (a cache report) reads each piece once; given its owner's
 * `BodyReadCache`, requests read by earlier readers too (read-cache.ts says when that is safe).
 * A packed piece is read from its pack under its own id (stored-pieces.ts). A prune may write a
 * call's request flat, or a pack be joined into a larger one, between the reads of its
 * manifests, its packs and its pieces: a piece missing then is looked for again from the
 * call's manifests as stored now.
 */

/** Reads of a call's manifests again, when a prune changed them or a pack was joined meanwhile. */
const ATTEMPTS = 4;

/** A piece a manifest named was not found: gone, or its pack joined into another meanwhile. */
class PieceMissing extends Error {
  constructor(
    readonly callId: string,
    readonly what: string,
  ) {
    super(what);
  }
}
export class BodyReader {
  readonly #pieces = new Map<number, Buffer>();
  readonly #flat = new Map<string, PieceRange[]>();

  /** `db`: the store, or the transaction the reads belong to. */
  constructor(
    private readonly db: Kysely<StoreSchema>,
    private readonly cache?: BodyReadCache,
  ) {}

  async request(row: StoredBodies): Promise<Buffer> {
    if (row.body_storage === 0) return Buffer.from(row.request_body, "utf8");
    // The row was read: the call is stored, so the pieces its ranges name are the ones it had.
    const cached = this.cache?.get(row.id);
    if (cached !== undefined) this.#vouched(row.id, cached.ranges, cached.pieces);
    for (let attempt = 1; ; attempt++) {
      try {
        const ranges = await this.requestRanges(row);
        const body = await this.#assemble(row, ranges);
        if (cached === undefined) this.cache?.add(row.id, ranges, this.#pieces);
        return body;
      } catch (error) {
        if (!(error instanceof PieceMissing)) throw error;
        if (attempt >= ATTEMPTS) throw bodyGone(error.callId, error.what);
        // The manifests as stored now (a cached call's ranges stay true: see read-cache.ts).
        this.#flat.clear();
        if (cached !== undefined) this.#vouched(row.id, cached.ranges, cached.pieces);
      }
    }
  }

  async response(row: StoredBodies): Promise<Buffer> {
    if (row.body_storage === 0) return Buffer.from(row.response_body_base64, "base64");
    let stored = row.response_manifest;
    for (let attempt = 1; ; attempt++) {
      if (stored === null) throw bodyGone(row.id, "its response has no manifest");
      const manifest = decodeManifest(stored);
      if (manifest.kind !== "flat") throw bodyGone(row.id, "its response manifest is not flat");
      try {
        return await this.#assemble(row, manifest.ranges);
      } catch (error) {
        if (!(error instanceof PieceMissing)) throw error;
        if (attempt >= ATTEMPTS) throw bodyGone(error.callId, error.what);
        const now = await readCallManifests(this.db, row.subject_uid, row.id);
        if (now === undefined) throw bodyGone(row.id, "the call is gone");
        stored = now.response_manifest;
      }
    }
  }

  /** The request's flat ranges (its diffs applied): what a flat manifest of it lists. */
  async requestRanges(row: StoredBodies): Promise<PieceRange[]> {
    const cached = this.#flat.get(row.id);
    if (cached !== undefined) return cached;
    const chain = await readManifestChain(this.db, row.subject_uid, row.id, MAX_DIFF_DEPTH);
    // From the nearest flat manifest (or one this reader has) back to the call.
    const manifests: { id: string; manifest: Manifest }[] = [];
    let ranges: PieceRange[] | undefined;
    for (const link of chain) {
      // A call of the chain just read is stored: what the cache has of it may be used.
      const cached = this.cache?.get(link.id);
      if (cached !== undefined) this.#vouched(link.id, cached.ranges, cached.pieces);
      const known = this.#flat.get(link.id);
      if (known !== undefined) {
        ranges = known;
        break;
      }
      if (link.request_manifest === null) throw bodyGone(link.id, "its request has no manifest");
      const manifest = decodeManifest(link.request_manifest);
      if (manifest.kind === "flat") {
        ranges = [...manifest.ranges];
        this.#flat.set(link.id, ranges);
        break;
      }
      manifests.push({ id: link.id, manifest });
    }
    if (ranges === undefined) {
      const last = chain[chain.length - 1];
      throw bodyGone(
        row.id,
        `the call its request diffs against (${last?.request_base_call_id ?? "?"}) is gone`,
      );
    }
    for (const { id, manifest } of manifests.reverse()) {
      if (manifest.kind !== "diff") break;
      ranges = applyDiff(ranges, manifest);
      this.#flat.set(id, ranges);
    }
    return ranges;
  }

  /** Takes a stored call's request, as the cache has it, into this reader's pieces and ranges. */
  #vouched(
    callId: string,
    ranges: readonly PieceRange[],
    pieces: ReadonlyMap<number, Buffer>,
  ): void {
    if (!this.#flat.has(callId)) this.#flat.set(callId, [...ranges]);
    for (const [id, bytes] of pieces) if (!this.#pieces.has(id)) this.#pieces.set(id, bytes);
  }

  async #assemble(row: StoredBodies, ranges: readonly PieceRange[]): Promise<Buffer> {
    const missing = piecesOf(ranges).filter((id) => !this.#pieces.has(id));
    if (missing.length > 0) {
      for (const [id, bytes] of await readPieceBytes(this.db, row.subject_uid, missing)) {
        if (!this.#pieces.has(id)) this.#pieces.set(id, bytes);
      }
    }
    const parts: Buffer[] = [];
    let length = 0;
    for (const range of ranges) {
      const piece = this.#pieces.get(range.piece);
      if (piece === undefined) throw new PieceMissing(row.id, `piece ${range.piece} is gone`);
      if (range.offset + range.length > piece.length) {
        throw bodyGone(row.id, `piece ${range.piece} is shorter than its range`);
      }
      parts.push(piece.subarray(range.offset, range.offset + range.length));
      length += range.length;
    }
    return Buffer.concat(parts, length);
  }
}
