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
 * for every input. A valid file up to QUICK_DECODE_MAX_BYTES is parsed whole with JSON.parse
 * (checked as the element-wise decoder checks each value, format/fast-decode.ts) and validated
 * by hand (format/validate.ts); anything else (an unreadable file, a doubt, a large file) is
 * decoded by `decodeConversation`, loaded only then, which gives the reason an unreadable file
 * has. The members JSON.parse must keep are counted by the scan that also checks the canonical
 * layout (json-bytes.ts), so `canonical` is known without another pass.
 *
 * A third decoder of format 1, kept for speed on a file held whole: one JSON.parse of the
 * whole text takes a fraction of the time of the element-wise decoder, which parses each value
 * on its own to keep a large file's memory low. Workload: reading a file of up to 8 MiB (the
 * archive opening such a package, `verbatim archive check`): `node --expose-gc bin/run-ts.js
 * bench/archive/decoders.ts --turns 100,700`, the row "quick" against "element-wise": 0.51× its
 * CPU time at 100 turns (1.1 MB) and 0.59× at 700 turns (7.6 MB) when measured. The three
 * decoders run the one case table test/support/decoder-cases.ts (format/decoders.test.ts).
 */
export async function decodeConversationQuickly(bytes: Uint8Array): Promise<DecodeResult> {
  const quick = decodeQuicklyOrDoubt(bytes);
  if (quick !== undefined) return quick;
  const { decodeConversation } = await import("./decode.js");
  return decodeConversation(bytes);
}

/**
 * The quick path alone: the conversation of a valid file of up to QUICK_DECODE_MAX_BYTES, or
 * undefined for any doubt (an unreadable file, a larger one), which the caller hands to
 * another decoder.
 */
export function decodeQuicklyOrDoubt(bytes: Uint8Array): DecodeResult | undefined {
  if (bytes.byteLength > QUICK_DECODE_MAX_BYTES) return undefined;
  const text = decodeJsonBytes(bytes);
  if (!text.ok) return undefined;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found = newValueEnd();
  valueEnd(buffer, 0, found);
  if (found.end === NEED_MORE) return undefined;
  const parsed = checkedJsonParse(text.text, 0, found.members);
  const conversation = parsed === undefined ? undefined : validateConversation(parsed.value);
  if (parsed === undefined || conversation === undefined) return undefined;
  // Exactly one line break after the top-level object.
  const canonical =
    found.canonical &&
    parsed.keysInOrder &&
    found.end === bytes.byteLength - 1 &&
    bytes[found.end] === 0x0a;
  return { ok: true, conversation, canonical };
}
