import { VerbatimError } from "verbatim-llm/core";
import { openDatabase, type OpenDatabaseOptions } from "../../store/database.js";
import type { DatabaseLocation } from "../../store/location.js";
import { findRecordedCall } from "../../store/repositories/recorded-calls.js";
import { recordedRequest, recordedResponse } from "../recording/call-bytes.js";

/**
 * A recorded call's request or response body, byte for byte (`verbatim export --call ID --raw`);
 * a call of another subject is not found, as a missing one.
 */
export async function exportRecordedBody(options: {
  readonly location: DatabaseLocation;
  readonly subject: string;
  readonly id: string;
  readonly which: "request" | "response";
  /** How to open PostgreSQL (behind a pooler: VERBATIM_PG_POOLER). */
  readonly open?: OpenDatabaseOptions;
}): Promise<Buffer> {
  const database = await openDatabase(options.location, { ...options.open, poolSize: 1 });
  try {
    // Read as the subject's: another subject's call is not found, as a missing one.
    const row = await findRecordedCall(database.db, options.subject, options.id);
    if (row === undefined) {
      throw new VerbatimError("resource_not_found", `no recorded call ${options.id}`, {
        where: options.id,
        hint: `The call is not one of ${options.subject}'s: name the subject that made it`,
      });
    }
    return (
      options.which === "request"
        ? await recordedRequest(database, row)
        : await recordedResponse(database, row)
    ).bytes;
  } finally {
    await database.close();
  }
}
