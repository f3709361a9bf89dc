import { z } from "zod";
import { canonicalJsonText, VerbatimError, sha256Hex } from "verbatim-llm/core";
import type { Kysely } from "kysely";
import type { StoreSchema } from "../../store/schema.js";
import { findIdempotencyKey } from "../../store/repositories/gateway-idempotency.js";

/**
 * Idempotency keys: a write may carry a caller key; the first request with it is recorded with
 * a fingerprint of the request and the ids it produced. Repeating the request returns those
 * ids (nothing new is written); another request with the same key is refused.
 */
export type IdempotentOperation = "append" | "compress";

export interface IdempotentResult {
  readonly conversationId: string;
  readonly messageIds: readonly string[];
}

const resultSchema = z.strictObject({
  conversationId: z.string(),
  messageIds: z.array(z.string()),
});

/** The SHA-256 of the canonical JSON of what a request asks for. */
export function requestFingerprint(operation: IdempotentOperation, request: unknown): string {
  // The text is hashed as it is (its UTF-8 encoding), without a copy into a Buffer first.
  return sha256Hex(canonicalJsonText({ operation, request }));
}

/** The recorded result of a key, or undefined when the key is new. */
export async function replayIdempotencyKey(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  key: string,
  operation: IdempotentOperation,
  fingerprint: string,
): Promise<IdempotentResult | undefined> {
  const row = await findIdempotencyKey(db, subjectUid, key);
  if (row === undefined) return undefined;
  if (row.operation !== operation || row.request_sha256 !== fingerprint) {
    throw new VerbatimError(
      "gateway_idempotency_key_reused",
      `the idempotency key was already used for a different ${row.operation} request`,
      {
        where: "idempotencyKey",
        hint: "Use a new key for a new request; repeat a key only with the very same request",
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
