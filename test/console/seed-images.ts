/** A conversation with an image whose bytes the server holds (console thumbnails, issue 20). */
import { createHash } from "node:crypto";
import { GatewayImageStore } from "../../packages/server/src/gateway/conversations/images.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";

/** A 1×1 PNG. */
export const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
export const TINY_PNG_SHA256 = createHash("sha256").update(TINY_PNG).digest("hex");

/** A conversation whose first message holds text, the PNG (bytes held) and an image never held. */
export async function seedImages(
  database: StoreDatabase,
  subject: string,
): Promise<{ conversationId: string; messageId: string }> {
  const store = new GatewayMessageStore(database);
  await new GatewayImageStore(database).save(subject, [
    { sha256: TINY_PNG_SHA256, mimeType: "image/png", bytes: new Uint8Array(TINY_PNG) },
  ]);
  const [message] = await store.appendMessages(subject, {
    previousMessageId: null,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this picture?" },
          { type: "image", sha256: TINY_PNG_SHA256, mimeType: "image/png" },
          { type: "image", sha256: "b".repeat(64), mimeType: "image/jpeg" },
        ],
      },
    ],
  });
  return { conversationId: message?.conversationId ?? "", messageId: message?.id ?? "" };
}
