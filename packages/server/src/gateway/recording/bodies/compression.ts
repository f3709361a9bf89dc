import zlib from "node:zlib";
import { VerbatimError } from "verbatim-llm/core";

/**
 * How pieces are compressed (docs/server/recorded-calls.md, "How recorded bytes are stored").
 * Each piece names its codec, so a store may hold several and the setting can change at any
 * time. `auto` is zstd where this Node has it (22.15 and later), else brotli.
 */
export type Compression = "auto" | "zstd" | "brotli" | "gzip" | "none";
export const COMPRESSIONS: readonly Compression[] = ["auto", "zstd", "brotli", "gzip", "none"];

/** The codec number a piece row keeps. */
export const enum Codec {
  None = 0,
  Zstd = 1,
  Brotli = 2,
  Gzip = 3,
}

type ZstdZlib = {
  zstdCompressSync?: (input: Uint8Array, options?: object) => Buffer;
  zstdDecompressSync?: (input: Uint8Array) => Buffer;
  constants: { ZSTD_c_compressionLevel?: number };
};
const zstd = zlib as unknown as ZstdZlib;

export function zstdAvailable(): boolean {
  return zstd.zstdCompressSync !== undefined && zstd.zstdDecompressSync !== undefined;
}

/** Pieces shorter than this are kept as they are: compressing them saves nothing. */
const SMALLEST_COMPRESSED = 96;

export function codecOf(compression: Compression): Codec {
  switch (compression) {
    case "none":
      return Codec.None;
    case "gzip":
      return Codec.Gzip;
    case "brotli":
      return Codec.Brotli;
    case "zstd":
      if (!zstdAvailable()) {
        throw new VerbatimError(
          "invalid_argument",
          `zstd compression needs Node 22.15 or later; this is ${process.version}`,
          {
            where: "compression",
            hint: "Choose auto, brotli, gzip or none",
          },
        );
      }
      return Codec.Zstd;
    case "auto":
      return zstdAvailable() ? Codec.Zstd : Codec.Brotli;
  }
}

/** A piece's stored bytes and codec: compressed when that makes it smaller. */
export function compressPiece(bytes: Buffer, codec: Codec): { bytes: Buffer; codec: Codec } {
  if (codec === Codec.None || bytes.length < SMALLEST_COMPRESSED)
    return { bytes, codec: Codec.None };
  const packed =
    codec === Codec.Zstd
      ? (zstd.zstdCompressSync as NonNullable<ZstdZlib["zstdCompressSync"]>)(bytes)
      : codec === Codec.Brotli
        ? zlib.brotliCompressSync(bytes, {
            params: {
              [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
              [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
            },
          })
        : zlib.gzipSync(bytes, { level: 6 });
  return packed.length < bytes.length ? { bytes: packed, codec } : { bytes, codec: Codec.None };
}

/**
 * A pack's stored bytes and codec (packing.ts): as `compressPiece`, at a higher level. A pack
 * is written once in the background and read many times, so zstd spends more time on it
 * (level 9: about 4 ms for 256 KiB, and as fast to decompress as level 3).
 */
export function compressPack(bytes: Buffer, codec: Codec): { bytes: Buffer; codec: Codec } {
  if (codec !== Codec.Zstd || bytes.length < SMALLEST_COMPRESSED)
    return compressPiece(bytes, codec);
  const packed = (zstd.zstdCompressSync as NonNullable<ZstdZlib["zstdCompressSync"]>)(bytes, {
    params: { [zstd.constants.ZSTD_c_compressionLevel as number]: PACK_LEVEL },
  });
  return packed.length < bytes.length ? { bytes: packed, codec } : { bytes, codec: Codec.None };
}

/** zstd's level for packs. */
const PACK_LEVEL = 9;

export function decompressPiece(bytes: Buffer, codec: number, where: string): Buffer {
  switch (codec) {
    case Codec.None:
      return bytes;
    case Codec.Zstd:
      if (zstd.zstdDecompressSync === undefined) {
        throw new VerbatimError(
          "internal_error",
          `piece ${where} is zstd-compressed and this Node (${process.version}) cannot read zstd`,
          {
            where,
            hint: "Run verbatim on Node 22.15 or later to read it",
          },
        );
      }
      return zstd.zstdDecompressSync(bytes);
    case Codec.Brotli:
      return zlib.brotliDecompressSync(bytes);
    case Codec.Gzip:
      return zlib.gunzipSync(bytes);
    default:
      throw new VerbatimError(
        "internal_error",
        `piece ${where} names codec ${codec}, which this version does not know`,
        {
          where,
          hint: "It was written by a newer verbatim: read it with that version",
        },
      );
  }
}

/** Codecs whose frames, one after the other, decompress as one: the bytes one after the other. */
const CONCATENATING: ReadonlySet<number> = new Set([Codec.Zstd, Codec.Gzip]);

/**
 * Pieces' bytes as they were before compression, by id. The pieces of one codec that allows it
 * are decompressed in one call: a body of hundreds of small pieces costs one decompression, not
 * hundreds (each call starts a new decompressor).
 */
export function decompressPieces(
  pieces: readonly {
    readonly id: number;
    readonly codec: number;
    readonly size: number;
    readonly bytes: Buffer;
  }[],
): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  const grouped = new Map<number, (typeof pieces)[number][]>();
  for (const piece of pieces) {
    if (!CONCATENATING.has(piece.codec)) {
      out.set(piece.id, decompressPiece(piece.bytes, piece.codec, `${piece.id}`));
      continue;
    }
    const group = grouped.get(piece.codec) ?? [];
    group.push(piece);
    grouped.set(piece.codec, group);
  }
  for (const [codec, group] of grouped) {
    const where =
      group.length === 1 ? `${group[0]?.id}` : `${group[0]?.id} and ${group.length - 1} more`;
    const whole = decompressPiece(Buffer.concat(group.map((piece) => piece.bytes)), codec, where);
    let at = 0;
    for (const piece of group) {
      out.set(piece.id, whole.subarray(at, at + piece.size));
      at += piece.size;
    }
    if (at !== whole.length) {
      throw new VerbatimError(
        "internal_error",
        `pieces ${where} decompress to ${whole.length} bytes, not the ${at} they list`,
        {
          where,
          hint: "The store was changed outside verbatim; restore it from a backup",
        },
      );
    }
  }
  return out;
}
