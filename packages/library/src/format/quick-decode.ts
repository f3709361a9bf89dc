import { Buffer } from "node:buffer";
import { decodeJsonBytes } from "../core/strict-json.js";
import type { DecodeResult } from "./decode.js";
import { checkedJsonParse } from "./fast-decode.js";
import { NEED_MORE, newValueEnd, valueEnd } from "./json-bytes.js";
import { validateConversation } from "./validate.js";

/**
 * Above this size the file goes straight to `decodeConversation`: loading zod is then a small
 * part of the time, and that decoder is the one kept lean in memory for large files.
 */
export const QUICK_DECODE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * `decodeConversation` (format/decode.ts) without loading zod for a valid file: the same result
 * for every input. A valid file up to QUICK_DECODE_MAX_BYTES is parsed with JSON.parse (checked
 * as the decoder checks it, format/fast-decode.ts) and validated by hand (format/validate.ts);
 * anything else (an unreadable file, a doubt, a large file) is decoded by `decodeConversation`,
 * loaded only then, which gives the reason an unreadable file has. For short-lived processes
 * such as `verbatim archive check`, where loading zod took longer than everything else.
 * The members JSON.parse must keep are counted by the scan that also checks the canonical
 * layout (json-bytes.ts), so `canonical` is known without another pass.
 */
export async function decodeConversationQuickly(bytes: Uint8Array): Promise<DecodeResult> {
  if (bytes.byteLength <= QUICK_DECODE_MAX_BYTES) {
    const text = decodeJsonBytes(bytes);
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const found = newValueEnd();
    if (text.ok) valueEnd(buffer, 0, found);
    const parsed =
      text.ok && found.end !== NEED_MORE
        ? checkedJsonParse(text.text, 0, found.members)
        : undefined;
    const conversation = parsed === undefined ? undefined : validateConversation(parsed.value);
    if (parsed !== undefined && conversation !== undefined) {
      // Exactly one line break after the top-level object.
      const canonical =
        found.canonical &&
        parsed.keysInOrder &&
        found.end === bytes.byteLength - 1 &&
        bytes[found.end] === 0x0a;
      return { ok: true, conversation, canonical };
    }
  }
  const { decodeConversation } = await import("./decode.js");
  return decodeConversation(bytes);
}
