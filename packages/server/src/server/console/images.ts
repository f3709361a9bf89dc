import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { GatewayMessageStore } from "../../gateway/index.js";
import { GatewayImageStore } from "../../gateway/images.js";
import type { StoreDatabase } from "../../store/index.js";
import { errorReplySchema } from "../errors.js";
import { conversationOwner } from "../../store/repositories/console-queries.js";

/** The most bytes an image answer carries unless the request asks for fewer (`max_bytes`). */
export const DEFAULT_IMAGE_MAX_BYTES = 8 * 1024 * 1024;
const IMAGE_MAX_BYTES_LIMIT = 64 * 1024 * 1024;

const errors = { 400: errorReplySchema, 401: errorReplySchema, 404: errorReplySchema };

/**
 * Console: the bytes of an image a stored message shows (its `image` block names them by
 * SHA-256; the server keeps them in ai_gateway_images), for the page's thumbnails. The page
 * fetches them with the operator token in the header and shows them from a blob URL.
 */
export function registerImageConsoleRoute(
  app: FastifyInstance,
  database: StoreDatabase,
  store: GatewayMessageStore,
): void {
  const images = new GatewayImageStore(database);
  app.get<{
    Params: { id: string; messageId: string; block: number };
    Querystring: { max_bytes: number };
  }>(
    "/ai-gateway/conversations/:id/messages/:messageId/blocks/:block/image",
    {
      schema: {
        summary: "The bytes of an image block of a stored message (thumbnails in the console)",
        tags: ["console"],
        security: [{ operatorToken: [] }],
        params: z.object({
          id: z.string().min(1).max(200),
          messageId: z.string().min(1).max(200),
          block: z.coerce
            .number()
            .int()
            .min(0)
            .max(100_000)
            .describe("The index of the image block in the message's content."),
        }),
        querystring: z.object({
          max_bytes: z.coerce
            .number()
            .int()
            .min(1)
            .max(IMAGE_MAX_BYTES_LIMIT)
            .default(DEFAULT_IMAGE_MAX_BYTES)
            .describe(
              "The most bytes to answer with: a larger image is refused with 400 naming its size.",
            ),
        }),
        response: {
          200: z
            .unknown()
            .describe(
              "The image's bytes as stored, with its stored content type (image/png, image/jpeg, image/gif or image/webp) and its SHA-256 (hex) in the x-image-sha256 header.",
            ),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { id, messageId, block } = request.params;
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
      const { max_bytes } = request.query;
      if (held.bytes.byteLength > max_bytes) {
        throw new VerbatimError(
          "invalid_request",
          `the image is ${held.bytes.byteLength} bytes, more than max_bytes (${max_bytes})`,
          {
            where: "query.max_bytes",
            hint: `Ask with max_bytes=${held.bytes.byteLength} or more (at most ${IMAGE_MAX_BYTES_LIMIT})`,
          },
        );
      }
      const sha256 = createHash("sha256").update(held.bytes).digest("hex");
      // The stored type exactly; `no-store` and `nosniff` come with every console route
      // (reply-headers.ts): see docs/console.md, "Headers", for why an image is not cached.
      return reply
        .type(held.mimeType)
        .header("x-image-sha256", sha256)
        .header("content-security-policy", "default-src 'none'")
        .send(Buffer.from(held.bytes));
    },
  );
}
