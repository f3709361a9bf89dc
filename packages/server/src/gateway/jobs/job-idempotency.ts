import { z } from "zod";
import type { Kysely } from "kysely";
import { canonicalJsonText, sha256Hex, VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/database.js";
import { isUniqueViolation } from "../../store/errors.js";
import {
  findIdempotencyKey,
  insertIdempotencyKey,
} from "../../store/repositories/gateway-idempotency.js";
import type { StoreSchema } from "../../store/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { idempotencyKeySchema, parseOrThrow } from "../validation/checks.js";

/**
 * Idempotency keys of the job writes that a retry would otherwise repeat (creating a job,
 * starting an attempt, starting a turn), in the store's idempotency keys as appends use them:
 * the first request with a key records a fingerprint of itself and the ids it made; the same
 * request again gets those ids back, another request with the key is refused.
 */
export type JobOperation = "job.create" | "job.attempt" | "job.turn";

/** A request's key, checked, with its operation and fingerprint. */
export interface JobIdempotency {
  readonly subjectUid: string;
  readonly key: string;
  readonly operation: JobOperation;
  readonly fingerprint: string;
}

const resultSchema = z.strictObject({ jobId: z.string(), turnId: z.string().optional() });

/** What the first request with a key made. */
export type JobIdempotentResult = z.infer<typeof resultSchema>;

/** The request's idempotency, or undefined without a key; a bad key is `gateway_input_invalid`. */
export function jobIdempotency(
  subjectUid: string,
  key: string | undefined,
  operation: JobOperation,
  request: unknown,
): JobIdempotency | undefined {
  if (key === undefined) return undefined;
  return {
    subjectUid,
    key: parseOrThrow(idempotencyKeySchema, key, "idempotencyKey"),
    operation,
    fingerprint: sha256Hex(canonicalJsonText({ operation, request })),
  };
}

/** The result recorded under the key, or undefined when it is new; another request's key is a 409. */
export async function replayJobKey(
  db: Kysely<StoreSchema>,
  idempotency: JobIdempotency,
): Promise<JobIdempotentResult | undefined> {
  const row = await findIdempotencyKey(db, idempotency.subjectUid, idempotency.key);
  if (row === undefined) return undefined;
  if (row.operation !== idempotency.operation || row.request_sha256 !== idempotency.fingerprint) {
    throw new VerbatimError(
      "gateway_idempotency_key_reused",
      `the idempotency key ${JSON.stringify(idempotency.key)} was already used for a different ${row.operation} request`,
      {
        where: "idempotencyKey",
        hint: "Use a new key for a new request; repeat a key only to retry the very same request (same route, job and body)",
      },
    );
  }
  const parsed = resultSchema.safeParse(JSON.parse(row.result) as unknown);
  if (!parsed.success) {
    throw new VerbatimError("store_row_invalid", "a stored idempotency result is invalid", {
      where: "ai_gateway_idempotency_keys",
    });
  }
  return parsed.data;
}

/** What a keyed write does: `replayed` when the key was recorded already (nothing written). */
export type KeyedOutcome<T> =
  | { readonly replayed: false; readonly value: T; readonly result: JobIdempotentResult }
  | { readonly replayed: true; readonly result: JobIdempotentResult };

/**
 * Runs `work` in one write transaction and records the key with the result it made, in the same
 * transaction. `work` checks the key (replayJobKey) once it holds what serializes its writes:
 * SQLite's write lock, or on PostgreSQL the job's row lock. A concurrent request with the same
 * key that gets past that check fails on the key's primary key when it records it; it is then
 * answered from what the first request recorded.
 */
export async function keyedWrite<T>(
  database: StoreDatabase,
  idempotency: JobIdempotency,
  now: string,
  work: (db: Kysely<StoreSchema>) => Promise<KeyedOutcome<T>>,
): Promise<KeyedOutcome<T>> {
  try {
    return await inTransaction(database, async (db) => {
      const outcome = await work(db);
      if (!outcome.replayed) {
        await insertIdempotencyKey(db, {
          subject_uid: idempotency.subjectUid,
          idempotency_key: idempotency.key,
          operation: idempotency.operation,
          request_sha256: idempotency.fingerprint,
          result: JSON.stringify(outcome.result),
          created_at: now,
        });
      }
      return outcome;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const result = await replayJobKey(database.db, idempotency);
    if (result === undefined) throw error;
    return { replayed: true, result };
  }
}
