import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { IMAGE_MAX_BYTES_LIMIT } from "../../gateway/console/images.js";
import type { ConsoleService } from "../../gateway/console/service.js";
import { errorReplySchema } from "../errors.js";

/** The most bytes an image answer carries unless the request asks for fewer (`max_bytes`). */
export const DEFAULT_IMAGE_MAX_BYTES = 8 * 1024 * 1024;

const errors = { 400: errorReplySchema, 401: errorReplySchema, 404: errorReplySchema };

/**
 * Console: the bytes of an image a stored message shows (its `image` block names them by
 * SHA-256; the server keeps them in ai_gateway_images), for the page's thumbnails. The page
 * fetches them with the operator token in the header and shows them from a blob URL.
 */
export function registerImageConsoleRoute(app: FastifyInstance, service: ConsoleService): void {
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
      const image = await service.image({
        conversationId: id,
        messageId,
        block,
        maxBytes: request.query.max_bytes,
      });
      // The stored type exactly; `no-store` and `nosniff` come with every console route
      // (reply-headers.ts): see docs/console.md, "Headers", for why an image is not cached.
      return reply
        .type(image.mimeType)
        .header("x-image-sha256", image.sha256)
        .header("content-security-policy", "default-src 'none'")
        .send(Buffer.from(image.bytes));
    },
  );
}
