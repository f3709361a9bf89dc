import type { Block } from "verbatim-llm/history";
import type { Kysely } from "kysely";
import type { StoreDatabase } from "../../store/database.js";
import type { StoreSchema } from "../../store/schema.js";
import { findImages, insertImages } from "../../store/repositories/gateway-images.js";

/** An image's bytes with the SHA-256 (hex) its `image` block names them by. */
export interface HeldImage {
  readonly sha256: string;
  readonly mimeType: string;
  readonly bytes: Uint8Array;
}

/** The SHA-256 of every image block among `messages`, each once. */
export function imageHashesOf(
  messages: readonly { readonly content: readonly Block[] }[],
): string[] {
  const hashes = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) if (block.type === "image") hashes.add(block.sha256);
  }
  return [...hashes];
}

/** Keeps a subject's images with `db` (a transaction's, too), each SHA-256 once. */
export async function keepImages(
  db: Kysely<StoreSchema>,
  subject: string,
  images: Iterable<HeldImage>,
  createdAt: string,
): Promise<void> {
  const bySha256 = new Map<string, HeldImage>();
  for (const image of images) bySha256.set(image.sha256, image);
  const rows = [...bySha256.values()].map((image) => ({
    subject_uid: subject,
    sha256: image.sha256,
    mime_type: image.mimeType,
    byte_count: image.bytes.byteLength,
    data_base64: Buffer.from(image.bytes).toString("base64"),
    created_at: createdAt,
  }));
  await insertImages(db, rows);
}

/**
 * The bytes of the images stored messages show (docs/store.md, `ai_gateway_images`): kept as
 * sent, once per subject and SHA-256, so every later request of the chain renders them to its
 * provider again. A subject reads only its own images.
 */
export class GatewayImageStore {
  constructor(private readonly database: StoreDatabase) {}

  /** Keeps images (one already held is left as it is). */
  async save(subject: string, images: Iterable<HeldImage>): Promise<void> {
    await keepImages(this.database.db, subject, images, new Date().toISOString());
  }

  /** The subject's images among `sha256s`, by SHA-256 (one not held is absent). */
  async load(subject: string, sha256s: readonly string[]): Promise<Map<string, HeldImage>> {
    const rows = await findImages(this.database.db, subject, sha256s);
    return new Map(
      rows.map((row) => [
        row.sha256,
        {
          sha256: row.sha256,
          mimeType: row.mime_type,
          bytes: new Uint8Array(Buffer.from(row.data_base64, "base64")),
        },
      ]),
    );
  }
}
