import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import { ConversationElementDecoder } from "../../packages/library/src/format/element-decode.js";

/**
 * The element-wise decoder alone, fed `bytes` in chunks of the given sizes (cycled): the
 * conversation and whether the file was canonical, or undefined where the decoder doubts.
 */
export function feedInChunks(
  bytes: Uint8Array,
  sizes: readonly number[],
): { conversation: SavedConversation; canonical: boolean } | undefined {
  const decoder = new ConversationElementDecoder();
  let offset = 0;
  for (let index = 0; offset < bytes.length; index++) {
    const size = Math.max(1, sizes[index % sizes.length] ?? 1);
    if (!decoder.feed(bytes.subarray(offset, offset + size))) return undefined;
    offset += size;
  }
  const conversation = decoder.finish();
  return conversation === undefined ? undefined : { conversation, canonical: decoder.canonical };
}
