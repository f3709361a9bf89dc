import { createHash } from "node:crypto";
import { VerbatimError } from "verbatim-llm/core";
import type { Block, ImageBytesLookup } from "verbatim-llm/history";
import { imageHashesOf, type GatewayImageStore, type HeldImage } from "../conversations/images.js";
import { fetchGuarded, UrlFetchRefused } from "../upstream/guarded-fetch.js";
import { DEFAULT_IMAGE_URL_POLICY, type ImageUrlPolicy } from "../upstream/image-url-policy.js";
import type { CreateResponseBody } from "./schemas.js";

/**
 * The images of a request's input (`input_image` parts of messages and of tool outputs), read
 * before anything is written or sent (docs/server/responses.md, "Images"): a data URL is decoded, an
 * http(s) URL fetched once by the server, public addresses only unless the operator says
 * otherwise (../upstream/guarded-fetch.ts); either way the bytes are kept as sent, named by
 * their SHA-256, and every provider gets them in its own way. A `file_id` (OpenAI's Files API,
 * which this server does not have) and bytes that are not a PNG, JPEG, GIF or WebP image are
 * refused with a 400 naming the part.
 */

/** Most bytes of one image (20 MiB, the archive's budget of a whole package). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** How long the server waits for an image URL. */
export const IMAGE_FETCH_TIMEOUT_MS = 10_000;

type ImagePart = {
  readonly type: "input_image";
  readonly image_url?: string | null | undefined;
  readonly file_id?: string | null | undefined;
};

/** The image formats every provider takes, recognised by their first bytes. */
export function sniffImageType(bytes: Uint8Array): string | undefined {
  const starts = (...values: number[]) => values.every((value, index) => bytes[index] === value);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  const text = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 12 && text(0, 4) === "RIFF" && text(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

function refuse(message: string, where: string, hint: string): never {
  throw new VerbatimError("invalid_request", message, {
    where,
    hint: `${hint}; nothing was written`,
  });
}

function held(bytes: Uint8Array, where: string): HeldImage {
  if (bytes.byteLength > MAX_IMAGE_BYTES) {
    refuse(
      `the image has ${bytes.byteLength} bytes, more than the ${MAX_IMAGE_BYTES} this server keeps`,
      where,
      "Send a smaller image",
    );
  }
  const mimeType =
    sniffImageType(bytes) ??
    refuse(
      "the image is not a PNG, JPEG, GIF or WebP image (its first bytes say so)",
      where,
      "Send the image as PNG, JPEG, GIF or WebP",
    );
  return { sha256: createHash("sha256").update(bytes).digest("hex"), mimeType, bytes };
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*);base64,(.*)$/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function fromDataUrl(url: string, where: string): HeldImage {
  const match = DATA_URL.exec(url);
  const data = match?.[3];
  if (data === undefined || data.length % 4 !== 0 || !BASE64.test(data)) {
    refuse(
      "the data URL is not base64 data (data:<type>;base64,<data>)",
      where,
      "Send the image as data:image/png;base64,… with standard base64 and padding",
    );
  }
  return held(new Uint8Array(Buffer.from(data, "base64")), where);
}

async function fromUrl(url: string, where: string, policy: ImageUrlPolicy): Promise<HeldImage> {
  if (policy.mode === "off") {
    refuse(
      "this server does not fetch image URLs",
      where,
      "Send the image as a data URL (data:image/png;base64,…)",
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await fetchGuarded(url, {
      policy,
      maxBytes: MAX_IMAGE_BYTES,
      timeoutMs: IMAGE_FETCH_TIMEOUT_MS,
    });
  } catch (error) {
    if (error instanceof UrlFetchRefused) refuse(error.reason, where, error.hint);
    throw error;
  }
  return held(bytes, where);
}

async function resolve(part: ImagePart, where: string, policy: ImageUrlPolicy): Promise<HeldImage> {
  if (part.file_id !== undefined && part.file_id !== null) {
    refuse(
      "an input_image with file_id names a file of OpenAI's Files API, which this server does not have",
      `${where}.file_id`,
      "Send the image as image_url (a data URL or an http(s) URL)",
    );
  }
  const url = part.image_url;
  if (url === undefined || url === null || url === "") {
    refuse(
      "an input_image needs image_url",
      `${where}.image_url`,
      "Send image_url: a data URL or an http(s) URL",
    );
  }
  if (url.startsWith("data:")) return fromDataUrl(url, `${where}.image_url`);
  if (url.startsWith("https://") || url.startsWith("http://"))
    return fromUrl(url, `${where}.image_url`, policy);
  return refuse(
    "image_url is neither a data URL nor an http(s) URL",
    `${where}.image_url`,
    "Send a data URL (data:image/png;base64,…) or an http(s) URL",
  );
}

/** Every input_image part of the input with the path that names it. */
function imageParts(input: CreateResponseBody["input"]): { part: ImagePart; where: string }[] {
  if (typeof input === "string") return [];
  const found: { part: ImagePart; where: string }[] = [];
  const collect = (parts: readonly { type: string }[], where: string) => {
    parts.forEach((part, index) => {
      if (part.type === "input_image")
        found.push({ part: part as ImagePart, where: `${where}[${index}]` });
    });
  };
  input.forEach((item, index) => {
    const where = `body.input[${index}]`;
    if ("role" in item) {
      if (typeof item.content !== "string") collect(item.content, `${where}.content`);
    } else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      if (typeof item.output !== "string") collect(item.output, `${where}.output`);
    }
  });
  return found;
}

/**
 * The images of the input by the `image_url` that gave them (what inputToMessages looks up),
 * each read once, an http(s) URL as `policy` allows (the `public` mode when none is given);
 * a refusal names the first part that fails.
 */
export async function resolveInputImages(
  input: CreateResponseBody["input"],
  /** The server's setting (required so that no route forgets it; undefined: the default). */
  policy: ImageUrlPolicy | undefined,
): Promise<ReadonlyMap<string, HeldImage>> {
  const images = new Map<string, HeldImage>();
  for (const { part, where } of imageParts(input)) {
    const url = part.image_url ?? "";
    if (images.has(url) && part.file_id == null) continue;
    images.set(url, await resolve(part, where, policy ?? DEFAULT_IMAGE_URL_POLICY));
  }
  return images;
}

/**
 * The bytes of every image the model is shown (ImageBytesLookup): those of the input as read,
 * the context's from the subject's kept images. An image block whose bytes are not held makes
 * the renderer refuse it (provider_image_missing) rather than send a hole.
 */
export async function imageLookup(
  store: GatewayImageStore,
  subject: string,
  history: readonly { readonly content: readonly Block[] }[],
  fresh: ReadonlyMap<string, HeldImage>,
): Promise<ImageBytesLookup> {
  const bytes = new Map<string, Uint8Array>();
  for (const image of fresh.values()) bytes.set(image.sha256, image.bytes);
  const missing = imageHashesOf(history).filter((sha256) => !bytes.has(sha256));
  for (const image of (await store.load(subject, missing)).values()) {
    bytes.set(image.sha256, image.bytes);
  }
  return (sha256) => bytes.get(sha256);
}
