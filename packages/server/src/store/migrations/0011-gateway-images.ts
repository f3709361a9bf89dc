import type { Kysely } from "kysely";
import type { Migration } from "./migration.js";

/**
 * `ai_gateway_images`: the bytes of the images stored messages show (an `image` block names
 * its image by SHA-256, src/history), kept as sent, content-addressed per subject as the
 * archive's image store keeps them per package: one row per subject and SHA-256, written once
 * however many messages show it. The bytes are base64 text (one column type on both
 * databases).
 */
export const gatewayImagesMigration: Migration = {
  name: "0011-gateway-images",
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("ai_gateway_images")
      .addColumn("subject_uid", "text", (column) => column.notNull())
      .addColumn("sha256", "text", (column) => column.notNull())
      .addColumn("mime_type", "text", (column) => column.notNull())
      .addColumn("byte_count", "integer", (column) => column.notNull())
      .addColumn("data_base64", "text", (column) => column.notNull())
      .addColumn("created_at", "text", (column) => column.notNull())
      .addPrimaryKeyConstraint("ai_gateway_images_pk", ["subject_uid", "sha256"])
      .execute();
  },
};
