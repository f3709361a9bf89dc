import { GatewayImageStore, imageHashesOf } from "../conversations/images.js";
import type { GatewayMessage, GatewayMessageStore } from "../index.js";
import type { ImageUrls } from "./convert.js";

/**
 * The kept images of `messages` as data URLs, read at once, for giving the messages back as
 * items (input_items, conversation items): an image comes back as the `input_image` it was
 * sent as, its bytes as a data URL (an image whose bytes the subject does not hold: null).
 */
export async function imageUrlsOf(
  store: GatewayMessageStore,
  subject: string,
  messages: readonly GatewayMessage[],
): Promise<ImageUrls> {
  const hashes = imageHashesOf(messages);
  if (hashes.length === 0) return () => null;
  const images = await new GatewayImageStore(store.database).load(subject, hashes);
  return (sha256) => {
    const image = images.get(sha256);
    return image === undefined
      ? null
      : `data:${image.mimeType};base64,${Buffer.from(image.bytes).toString("base64")}`;
  };
}
