import { createHash } from "node:crypto";
import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/database.js";
import { conversationOwner } from "../../store/repositories/console-queries.js";
import { GatewayImageStore } from "../conversations/images.js";
import type { GatewayMessageStore } from "../conversations/message-store.js";

/** The most bytes an image answer may be asked to carry (`max_bytes`). */
export const IMAGE_MAX_BYTES_LIMIT = 64 * 1024 * 1024;

/** An image block of a stored message, as the console asks for it. */
export interface ImageRequest {
  readonly conversationId: string;
  readonly messageId: string;
  /** The index of the image block in the message's content. */
  readonly block: number;
  /** The most bytes to answer with: a larger image is refused naming its size. */
  readonly maxBytes: number;
}

/** An image's bytes as stored, with their stored content type and their SHA-256 (hex). */
export interface ConsoleImage {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
  readonly sha256: string;
}

/**
 * The bytes of an image a stored message shows (its `image` block names them by SHA-256; the
 * server keeps them in ai_gateway_images), for the console page's thumbnails.
 */
export async function readConsoleImage(
  database: StoreDatabase,
  store: GatewayMessageStore,
  images: GatewayImageStore,
  request: ImageRequest,
): Promise<ConsoleImage> {
  const { conversationId: id, messageId, block, maxBytes } = request;
  const missing = (what: string, where: string) =>
    new VerbatimError("resource_not_found", what, {
      where,
      hint: "Take the conversation, message and block index from GET /ai-gateway/conversations/:id/messages",
    });
  const subject = await conversationOwner(database, id);
  if (subject === undefined) throw missing(`no conversation ${id}`, "path.id");
  let message;
  try {
    message = await store.getMessage(subject, messageId);
  } catch (error) {
    if (isVerbatimError(error) && error.code === "gateway_message_not_found") {
      throw missing(`no message ${messageId} in conversation ${id}`, "path.messageId");
    }
    throw error;
  }
  if (message.conversationId !== id) {
    throw missing(`no message ${messageId} in conversation ${id}`, "path.messageId");
  }
  const image = message.content[block];
  if (image?.type !== "image") {
    throw missing(
      `block ${block} of message ${messageId} is ${image === undefined ? "not there" : `a ${image.type} block, not an image`}`,
      "path.block",
    );
  }
  const held = (await images.load(subject, [image.sha256])).get(image.sha256);
  if (held === undefined) {
    throw missing(
      `the bytes of image ${image.sha256} are not held (stored before the server kept image bytes, or never sent)`,
      "path.block",
    );
  }
  if (held.bytes.byteLength > maxBytes) {
    throw new VerbatimError(
      "invalid_request",
      `the image is ${held.bytes.byteLength} bytes, more than max_bytes (${maxBytes})`,
      {
        where: "query.max_bytes",
        hint: `Ask with max_bytes=${held.bytes.byteLength} or more (at most ${IMAGE_MAX_BYTES_LIMIT})`,
      },
    );
  }
  const sha256 = createHash("sha256").update(held.bytes).digest("hex");
  return { bytes: held.bytes, mimeType: held.mimeType, sha256 };
}
