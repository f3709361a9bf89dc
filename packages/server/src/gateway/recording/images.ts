import { createHash } from "node:crypto";
import type { Block } from "verbatim-llm/history";
import type { HeldImage } from "../conversations/images.js";

/**
 * The images of a recorded call's messages (docs/server/recorded-calls.md, "Recorded calls"): an image the
 * request carries as base64 (Anthropic `source.type: "base64"`, a Chat `image_url` data URL)
 * becomes an `image` block named by the SHA-256 of its bytes, the bytes kept in the subject's
 * image store as /v1/responses keeps an `input_image` (content-addressed: the same image in
 * every request of a session is one row). The recorded path passes requests through and
 * fetches nothing, so an image named by URL stays an `imageOmitted` block and its URL is noted
 * in the message's gateway facts (`imageUrls`). Bytes that are not a PNG, JPEG, GIF or WebP
 * image, or not base64, are an `imageOmitted` block too: the request's exact bytes are the
 * call's row either way.
 */
export interface RecordedImage {
  readonly block: Block;
  /** The bytes an `image` block names. */
  readonly image?: HeldImage;
  /** The URL of an image the request named by URL. */
  readonly url?: string;
}

/** Most bytes of one kept image (20 MiB, as /v1/responses). */
export const MAX_RECORDED_IMAGE_BYTES = 20 * 1024 * 1024;

/** The first bytes of each image format every provider takes (offset, bytes). */
const SIGNATURES: readonly { readonly mimeType: string; readonly marks: [number, string][] }[] = [
  { mimeType: "image/png", marks: [[0, "\x89PNG\r\n\x1a\n"]] },
  { mimeType: "image/jpeg", marks: [[0, "\xff\xd8\xff"]] },
  { mimeType: "image/gif", marks: [[0, "GIF8"]] },
  {
    mimeType: "image/webp",
    marks: [
      [0, "RIFF"],
      [8, "WEBP"],
    ],
  },
];

/** The image format of `bytes` by its first bytes, or undefined. */
export function imageTypeOf(bytes: Uint8Array): string | undefined {
  const at = (offset: number, mark: string) =>
    [...mark].every((char, index) => bytes[offset + index] === char.charCodeAt(0));
  return SIGNATURES.find((signature) => signature.marks.every(([offset, mark]) => at(offset, mark)))
    ?.mimeType;
}

const MIME_TYPE = /^[a-z]+\/[a-z0-9.+-]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_URL = /^data:([^;,]*)(?:;[^;,]*)*;base64,/;

/** The placeholder of an image whose bytes are not kept (its declared type when it has one). */
export function omittedImage(declared: unknown, url?: string): RecordedImage {
  const mimeType =
    typeof declared === "string" && MIME_TYPE.test(declared) ? declared : "image/png";
  const block: Block = { type: "imageOmitted", mimeType };
  return url === undefined ? { block } : { block, url };
}

/** An image given as base64 text (standard alphabet, padded). */
export function imageFromBase64(data: unknown, declared: unknown): RecordedImage {
  if (typeof data !== "string" || data.length % 4 !== 0 || !BASE64.test(data)) {
    return omittedImage(declared);
  }
  if ((data.length / 4) * 3 > MAX_RECORDED_IMAGE_BYTES + 2) return omittedImage(declared);
  const bytes = new Uint8Array(Buffer.from(data, "base64"));
  const mimeType = imageTypeOf(bytes);
  if (mimeType === undefined || bytes.byteLength > MAX_RECORDED_IMAGE_BYTES) {
    return omittedImage(declared);
  }
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { block: { type: "image", sha256, mimeType }, image: { sha256, mimeType, bytes } };
}

/** The type an image URL's file name suggests (for the placeholder only). */
function typeOfUrl(url: string): string | undefined {
  const name = /\.([a-z]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  if (name === "jpg" || name === "jpeg") return "image/jpeg";
  if (name === "gif" || name === "webp" || name === "png") return `image/${name}`;
  return undefined;
}

/** An image given as a URL: a data URL's bytes are kept; any other URL is noted, not fetched. */
export function imageFromUrl(url: unknown): RecordedImage {
  if (typeof url !== "string") return omittedImage(undefined);
  const match = DATA_URL.exec(url);
  if (match !== null) return imageFromBase64(url.slice(match[0].length), match[1]);
  return omittedImage(typeOfUrl(url), url);
}
