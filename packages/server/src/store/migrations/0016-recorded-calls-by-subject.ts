import type { Kysely } from "kysely";
import type { Migration } from "./migration.js";

/**
 * A subject's recorded calls in id order, found without walking every subject's calls:
 * `verbatim db prune` weighs each subject's pieces against that subject's manifests a page at a
 * time, and deletes calls by subject and id. Without it, each page walked the calls of every
 * subject by id, so a prune's sweep grew with the number of subjects times the store's calls.
 */
export const recordedCallsBySubjectMigration: Migration = {
  name: "0016-recorded-calls-by-subject",
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex("ai_gateway_recorded_calls_subject")
      .on("ai_gateway_recorded_calls")
      .columns(["subject_uid", "id"])
      .execute();
  },
};
