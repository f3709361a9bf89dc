import type { StoreDatabase } from "../../../store/database.js";
import { claimOldBodyCalls, setPieceBodies } from "../../../store/repositories/recorded-bodies.js";
import { findRecordedCall } from "../../../store/repositories/recorded-calls.js";
import { inTransaction } from "../../../store/transaction.js";
import { BodyStore, StaleBodies } from "./body-store.js";
import type { Compression } from "./compression.js";

/**
 * Converts calls recorded before migration 0015 (their bodies whole in `request_body` and
 * `response_body_base64`) to pieces, as a call is recorded now (docs/server/recorded-calls.md,
 * "How recorded bytes are stored"): `verbatim db migrate` runs it. In batches, each one
 * transaction (interrupted, even by `kill -9`, a batch is undone whole and the next run does it
 * again); several processes at once each take batches no other holds (PostgreSQL: `FOR UPDATE
 * SKIP LOCKED`; SQLite: one writer at a time). Oldest first, so a session's calls are diffs of
 * one another as if recorded now.
 */
export interface ConversionReport {
  /** Calls converted by this run. */
  readonly calls: number;
  /** Their bodies' bytes as they were kept before (the request text, the response's base64). */
  readonly bytesBefore: number;
}

export interface ConversionOptions {
  /** Calls per transaction (default 100). */
  readonly batch?: number;
  readonly compression?: Compression;
  /** Told after each batch is committed. */
  readonly onBatch?: (done: ConversionReport) => void;
}

export function conversionLine(report: ConversionReport): string {
  const megabytes = (report.bytesBefore / 1024 / 1024).toFixed(1);
  return `stored the bodies of ${report.calls} call(s) recorded before migration 0015 as pieces (${megabytes} MB kept whole before)`;
}

export async function convertOldBodies(
  database: StoreDatabase,
  options: ConversionOptions = {},
): Promise<ConversionReport> {
  const bodies = new BodyStore(database, {
    ...(options.compression === undefined ? {} : { compression: options.compression }),
  });
  let calls = 0;
  let bytesBefore = 0;
  for (;;) {
    const batch = await inTransaction(database, async (db) => {
      // Found across subjects (the migration of old rows); each then read and written naming its owner.
      const claimed = await claimOldBodyCalls(db, database.capabilities, options.batch ?? 100);
      const done = { calls: 0, bytes: 0 };
      for (const { id, subject_uid: subjectUid } of claimed) {
        const row = await findRecordedCall(db, subjectUid, id);
        if (row === undefined || row.body_storage !== 0) continue;
        const request = Buffer.from(row.request_body, "utf8");
        const response = Buffer.from(row.response_body_base64, "base64");
        for (let fresh = false; ; fresh = true) {
          const prepared = await bodies.prepare(row.subject_uid, request, response, fresh, db);
          try {
            const { columns, remembered } = await bodies.write(db, prepared, row.created_at);
            if (await setPieceBodies(db, subjectUid, id, columns)) {
              done.calls++;
              done.bytes += row.request_body.length + row.response_body_base64.length;
              // A base at once: the batch's next calls see this row in their transaction (a
              // rollback leaves a base that is gone, which `write` finds and writes around).
              bodies.remember(prepared, id, remembered);
            }
            break;
          } catch (error) {
            if (!(error instanceof StaleBodies) || fresh) throw error;
            bodies.recent.forget(row.subject_uid);
          }
        }
      }
      return { claimed: claimed.length, ...done };
    });
    calls += batch.calls;
    bytesBefore += batch.bytes;
    options.onBatch?.({ calls, bytesBefore });
    if (batch.claimed === 0) return { calls, bytesBefore };
  }
}
