import { Buffer } from "node:buffer";
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import type { DecodeResult } from "../format/decode.js";
import { ConversationElementDecoder } from "../format/element-decode.js";
import { QUICK_DECODE_MAX_BYTES, decodeConversationQuickly } from "../format/quick-decode.js";
import type { Fingerprint } from "./disk.js";

/** Bytes read and decoded at a time: the file is never held whole unless it is unreadable. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * `agent/conversation.json`, read and decoded; `decoded.canonical` says whether its bytes are
 * the canonical encoding of the conversation, found while decoding it.
 */
export interface ConversationFileRead {
  readonly decoded: DecodeResult;
  readonly fingerprint: Fingerprint;
}

/**
 * Reads and decodes a regular file without following a symbolic link (O_NOFOLLOW; O_NONBLOCK,
 * so a named pipe swapped in never blocks the open): a link, a folder, a pipe or a missing file
 * gives undefined. A small file is read whole and decoded without loading zod when it is valid
 * (format/quick-decode.ts). A large one is read in chunks of 1 MiB, each given to the
 * element-wise decoder (format/element-decode.ts), so neither its bytes nor its text are held
 * whole (nor zod loaded when it is valid); a file that path does not accept is read again whole
 * and given to the whole-file decoder (format/decode.ts, loaded only then), which says why it
 * is unreadable.
 */
export async function readConversationFile(
  path: string,
): Promise<ConversationFileRead | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    const decoded =
      info.size <= QUICK_DECODE_MAX_BYTES
        ? await decodeConversationQuickly(await readAll(handle))
        : await decodeInChunks(handle);
    const fingerprint = { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
    return { decoded, fingerprint };
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

async function decodeInChunks(handle: FileHandle): Promise<DecodeResult> {
  const decoder = new ConversationElementDecoder();
  // One buffer for every read: the decoder copies what it keeps of each chunk.
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    if (!decoder.feed(chunk.subarray(0, bytesRead))) return decodeWholeFile(handle);
  }
  const conversation = decoder.finish();
  if (conversation !== undefined) return { ok: true, conversation, canonical: decoder.canonical };
  return decodeWholeFile(handle);
}

/** The whole-file decoder's result for the file: the reason it is unreadable. */
async function decodeWholeFile(handle: FileHandle): Promise<DecodeResult> {
  const [{ decodeWholeFile: decode }, bytes] = await Promise.all([
    import("../format/decode.js"),
    readAll(handle),
  ]);
  return decode(bytes);
}

/** The whole file, from its first byte (positional reads, so the handle's offset is unused). */
async function readAll(handle: FileHandle): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let position = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) return Buffer.concat(chunks, position);
    chunks.push(chunk.subarray(0, bytesRead));
    position += bytesRead;
  }
}
