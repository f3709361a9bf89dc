import { createSanitizer, type Sanitizer } from "verbatim-llm/trajectory";
import type { StoreDatabase } from "../../store/index.js";
import {
  findRecordedCall,
  insertRecordedCall,
  listUnplacedCallIds,
} from "../../store/repositories/recorded-calls.js";
import { inTransaction } from "../../store/transaction.js";
import { newId } from "../ids.js";
import { BodyReader } from "./bodies/body-reader.js";
import { BodyStore, StaleBodies, type PreparedRequest } from "./bodies/body-store.js";
import type { Compression } from "./bodies/compression.js";
import {
  callOfRow,
  messagesOfBody,
  type CallToPlace,
  type PlacementOptions,
  type RecordedCallResult,
} from "./placement.js";
import { LeftoverSweep } from "./leftovers.js";
import { placeInSlices } from "./placing.js";
import { PrefixHashCache } from "./prefix-cache.js";
import { SubjectQueues } from "./queue.js";
import { QuietGate } from "./quiet.js";
import { RecentRequests } from "./recent-requests.js";
import { decodeBody, type WireFormat } from "./usage.js";

export type { RecordedCallResult } from "./placement.js";

/**
 * Records the model calls of the pass-through routes as chains (docs/server/recorded-calls.md, "Recorded
 * calls"), in two steps:
 * 1. `keep`: the call's bytes (request and response, headers without credentials) are one row,
 *    committed in one statement. The route ends the client's response after this commit: that
 *    is what is durable when the client has its answer.
 * 2. Its placing in a chain (placement.ts: matching, the conversation, chain nodes,
 *    gateway messages, previous call, usage) runs right after, in transactions under the
 *    subject's lock (a slice of a long call's messages each, placing.ts), queued per subject in this process (queue.ts) in the order the
 *    calls were kept, once no call is being read or answered for a moment (quiet.ts;
 *    the routes mark it with `busy`) or at most `placeWithinMs` after the keep. A session's next
 *    call is placed after its previous one, so its matching sees every earlier call, whatever
 *    runs concurrently.
 * A call left unplaced (the process ended between the two steps, or another server process on
 * the same database kept it) is placed from its row by the next placing of its subject (which
 * places every earlier unplaced call of its subject first, whichever process kept it), at start,
 * and, once it is `leftoverAfterMs` old, by any server's periodic look (`placeLeftovers`,
 * leftovers.ts), oldest first: nothing kept is lost. `close` waits for the queue.
 */
export interface CallToRecord {
  readonly subjectUid: string;
  readonly format: WireFormat;
  readonly path: string;
  readonly model: string;
  readonly messages: readonly unknown[];
  readonly requestHeaders: Readonly<Record<string, string>>;
  readonly requestBody: Buffer;
  readonly statusCode: number;
  readonly responseHeaders: Readonly<Record<string, string>>;
  readonly responseBody: Buffer;
  readonly durationMs: number;
  /**
   * The request's bodies part, prepared while the upstream answered (`prepareRequest`); not
   * used when the bodies are redacted. Undefined (or a promise of undefined): prepared here.
   */
  readonly preparedRequest?: Promise<PreparedRequest | undefined>;
}

/** A kept call: its id, and the promise of its place in a chain. */
export interface KeptCall {
  readonly callId: string;
  readonly placed: Promise<RecordedCallResult>;
}

export interface RecordedCallsOptions {
  /**
   * Write each call's history as gateway messages too (default true); false keeps only the
   * raw calls and the chain nodes (the benchmark compares both).
   */
  readonly gatewayMessages?: boolean;
  /**
   * Run both bodies through the trajectory sanitizer's rules before storing them (default
   * false: exact bytes, for replay). VERBATIM_RECORD_REDACT=1 turns it on for `verbatim serve`.
   */
  readonly redact?: boolean;
  /**
   * The longest a kept call waits for a quiet moment before it is placed (default 100 ms);
   * placing waits for 2 ms without a call being read or answered.
   */
  readonly placeWithinMs?: number;
  /**
   * How new pieces of recorded bodies are compressed (default `auto`: zstd where this Node has
   * it, else brotli). VERBATIM_RECORD_COMPRESSION sets it for `verbatim serve`.
   */
  readonly compression?: Compression;
  /**
   * Packs a subject's small pieces of recorded bytes into larger ones once it has recorded
   * nothing for this long (bodies/packing.ts; off when not given).
   * VERBATIM_RECORD_PACK_AFTER_MS sets it for `verbatim serve`.
   */
  readonly packAfterMs?: number;
  /** Told when placing a call this process did not keep (a leftover) fails. */
  readonly onLeftoverError?: (error: unknown, callId: string | undefined) => void;
  /**
   * How long after its keep a call still unplaced is taken as left by a server that died, and
   * placed by this one (default 30 s; leftovers.ts). `verbatim serve` uses the response lease
   * (VERBATIM_RESPONSE_LEASE_MS).
   */
  readonly leftoverAfterMs?: number;
}

/** Headers that carry credentials: never stored. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "x-api-key",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "api-key",
  "x-goog-api-key",
  // An AWS session token (Bedrock and other AWS-signed endpoints) is a credential too.
  "x-amz-security-token",
]);

export function withoutCredentials(
  headers: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) out[name] = value;
  }
  return out;
}

export class RecordedCalls {
  private readonly sanitizer: Sanitizer | undefined;
  /** Where the calls' bodies go: pieces stored once per subject (bodies/). */
  readonly bodies: BodyStore;
  /** The prefix hashes of each session's last call, reused by its next (recorded-prefix-cache). */
  readonly prefixes = new PrefixHashCache();
  /** The last requests of each subject as parsed, for its next ones' parse (recent-requests.ts). */
  readonly requests = new RecentRequests();
  readonly #placement: PlacementOptions;
  readonly #queues = new SubjectQueues();
  readonly #quiet: QuietGate;
  /** Calls kept by this process and not placed yet: their own queued job places them. */
  readonly #pending = new Map<string, CallToPlace>();
  /** Unplaced calls whose placing failed here: left for the next start. */
  readonly #failed = new Set<string>();
  readonly #onLeftoverError: (error: unknown, callId: string | undefined) => void;
  /** The start's look for unplaced calls (placeLeftovers). */
  #looking: Promise<void> = Promise.resolve();
  /** Looks for calls nobody places (a crash, a server that died), at start and periodically. */
  readonly #leftovers: LeftoverSweep;

  constructor(
    private readonly database: StoreDatabase,
    options: RecordedCallsOptions = {},
  ) {
    this.sanitizer = options.redact === true ? createSanitizer() : undefined;
    this.bodies = new BodyStore(database, {
      ...(options.compression === undefined ? {} : { compression: options.compression }),
      ...(options.packAfterMs === undefined || options.packAfterMs <= 0
        ? {}
        : {
            packing: {
              afterMs: options.packAfterMs,
              // As placing: when no call is being answered (SQLite's one connection).
              beforeEach: () => this.#quiet.quiet(performance.now()),
              onError: (error: unknown) => this.#onLeftoverError(error, undefined),
            },
          }),
    });
    this.#placement = {
      prefixes: this.prefixes,
      gatewayMessages: options.gatewayMessages !== false,
      writesInWith: database.capabilities.writesInWith,
    };
    this.#onLeftoverError = options.onLeftoverError ?? (() => undefined);
    this.#quiet = new QuietGate(2, options.placeWithinMs ?? 100);
    this.#leftovers = new LeftoverSweep(
      database,
      {
        placeSubject: (subjectUid) => {
          if (this.#queues.has(subjectUid)) return;
          this.#queues
            .run(subjectUid, () => this.#place(subjectUid, undefined))
            .catch((error: unknown) => this.#onLeftoverError(error, undefined));
        },
        failedIds: () => [...this.#failed],
      },
      options.leftoverAfterMs === undefined ? {} : { afterMs: options.leftoverAfterMs },
    );
  }

  /**
   * True when the commit of `keep` holds this thread's event loop until it is done (SQLite);
   * false when it is a round trip, the event loop free meanwhile (PostgreSQL).
   */
  get commitHoldsThread(): boolean {
    return this.database.capabilities.runsInThread;
  }

  /**
   * Marks a call as being read or answered until the returned function is called: placing
   * waits for it (quiet.ts).
   */
  busy(): () => void {
    return this.#quiet.busy();
  }

  /** Keeps a call and places it in its chain (both steps, awaited). */
  async record(call: CallToRecord): Promise<RecordedCallResult> {
    return (await this.keep(call)).placed;
  }

  /**
   * Prepares the request's part of a call's bodies before its answer (body-store.ts,
   * `prepareRequest`), for `keep`'s `preparedRequest`. Never rejects: a failure leaves the
   * preparing to `keep`. Undefined when the bodies are redacted (prepared from what is kept).
   */
  prepareRequest(subjectUid: string, request: Buffer): Promise<PreparedRequest | undefined> {
    if (this.sanitizer !== undefined) return Promise.resolve(undefined);
    return this.bodies.prepareRequest(subjectUid, request).catch(() => undefined);
  }

  /**
   * Step 1: commits the call's bytes, then queues its placing (step 2) before returning, so a
   * call the client sends after this one's answer is placed after it.
   */
  async keep(call: CallToRecord): Promise<KeptCall> {
    const now = new Date();
    const createdAt = now.toISOString();
    const callId = newId("call", now.getTime());
    let requestBody = call.requestBody;
    let responseBody = call.responseBody;
    const responseHeaders = withoutCredentials(call.responseHeaders);
    let messages = call.messages;
    if (this.sanitizer !== undefined) {
      const text = this.sanitizer.sanitizeText(requestBody.toString("utf8")).value;
      requestBody = Buffer.from(text, "utf8");
      // A body the server cannot decode is not kept at all rather than kept unredacted.
      const decoded = decodeBody(call.responseBody, call.responseHeaders["content-encoding"]);
      responseBody =
        decoded === undefined
          ? Buffer.alloc(0)
          : Buffer.from(this.sanitizer.sanitizeText(decoded.toString("utf8")).value, "utf8");
      if (decoded !== undefined) {
        delete responseHeaders["content-encoding"];
        delete responseHeaders["content-length"];
      }
      // The chain is written from what is stored: no unredacted text in its messages either.
      messages = messagesOfBody(text, call.format);
    }
    const row = {
      id: callId,
      subject_uid: call.subjectUid,
      conversation_id: "",
      wire_format: call.format,
      path: call.path,
      model: call.model,
      tip_prefix_sha256: "",
      message_count: call.messages.length,
      matched_count: 0,
      previous_call_id: null,
      status_code: call.statusCode,
      request_headers: JSON.stringify(withoutCredentials(call.requestHeaders)),
      request_body: "",
      response_headers: JSON.stringify(responseHeaders),
      response_body_base64: "",
      redacted: this.sanitizer === undefined ? 0 : 1,
      input_tokens: null,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      duration_ms: Math.round(call.durationMs),
      created_at: createdAt,
    };
    await this.#keepRow(
      row,
      requestBody,
      responseBody,
      this.sanitizer === undefined ? call.preparedRequest : undefined,
    );
    this.#pending.set(callId, {
      id: callId,
      subjectUid: call.subjectUid,
      format: call.format,
      model: call.model,
      messages,
      statusCode: call.statusCode,
      responseHeaders,
      responseBody,
      createdAt,
    });
    const keptAt = performance.now();
    const placed = this.#queues.run(call.subjectUid, async () => {
      await this.#quiet.quiet(keptAt);
      return this.#place(call.subjectUid, callId);
    });
    return { callId, placed: placed as Promise<RecordedCallResult> };
  }

  /**
   * Writes the call's row and its bodies' pieces in one transaction. When a base or piece the
   * bodies refer to was deleted meanwhile (a prune), they are written again without them.
   */
  async #keepRow(
    row: Omit<Parameters<typeof insertRecordedCall>[1], "request_manifest">,
    request: Buffer,
    response: Buffer,
    preparedRequest: Promise<PreparedRequest | undefined> | undefined,
  ): Promise<void> {
    for (let fresh = false; ; fresh = true) {
      const early = fresh ? undefined : await preparedRequest;
      const prepared =
        early !== undefined && early.request === request && early.subjectUid === row.subject_uid
          ? await this.bodies.prepareResponse(early, response)
          : await this.bodies.prepare(row.subject_uid, request, response, fresh);
      try {
        const written = await inTransaction(this.database, async (db) => {
          const { columns, remembered } = await this.bodies.write(db, prepared, row.created_at);
          await insertRecordedCall(db, { ...row, ...columns });
          return remembered;
        });
        this.bodies.remember(prepared, row.id, written);
        return;
      } catch (error) {
        if (!(error instanceof StaleBodies) || fresh) throw error;
        this.bodies.recent.forget(row.subject_uid);
      }
    }
  }

  /**
   * Queues the placing of the oldest unplaced calls' subjects (those a crash left, oldest first)
   * and resolves once they are queued; then, until `close`, places the calls kept more than
   * `leftoverAfterMs` ago that are still unplaced (a server that died left them). Called at start.
   */
  placeLeftovers(): Promise<void> {
    this.#looking = this.#leftovers.start((error) => this.#onLeftoverError(error, undefined));
    return this.#looking;
  }

  /** Resolves once every queued placing has ended (and stops looking for leftovers). */
  async close(): Promise<void> {
    await this.#looking.catch(() => undefined);
    await this.#leftovers.stop();
    await this.#queues.idle();
    await this.bodies.packing?.stop();
  }

  /**
   * Places the subject's unplaced calls that no job of this process will place, oldest first,
   * then `own` (a call this process kept), each in its own transaction under the subject's
   * lock. A leftover that fails is logged by the caller's error and skipped until next start.
   */
  async #place(
    subjectUid: string,
    own: string | undefined,
  ): Promise<RecordedCallResult | undefined> {
    try {
      for (;;) {
        // Chosen outside a transaction: each transaction of the placing checks, under the
        // subject's lock, that the call is still unplaced.
        const ids = await listUnplacedCallIds(this.database.db, subjectUid);
        // The oldest first, this process's own calls included (kept in another order than
        // their commits came back, or queued behind this subject's job).
        const next = ids.find((id) => id === own || !this.#failed.has(id));
        if (next === undefined) return await this.#placedElsewhere(subjectUid, own);
        try {
          const local = this.#pending.get(next);
          const row =
            local === undefined
              ? await findRecordedCall(this.database.db, subjectUid, next)
              : undefined;
          const call =
            local ??
            (row === undefined
              ? undefined
              : await callOfRow(row, new BodyReader(this.database.db)));
          const result =
            call === undefined
              ? undefined
              : await placeInSlices(this.database, this.#placement, call);
          if (next === own) return result ?? (await this.#placedElsewhere(subjectUid, own));
        } catch (error) {
          if (next === own) throw error;
          this.#failed.add(next);
          this.#onLeftoverError(error, next);
        }
      }
    } finally {
      if (own !== undefined) this.#pending.delete(own);
    }
  }

  /** The result of a call another process placed (its answer's message is not looked up). */
  async #placedElsewhere(
    subjectUid: string,
    id: string | undefined,
  ): Promise<RecordedCallResult | undefined> {
    const row =
      id === undefined ? undefined : await findRecordedCall(this.database.db, subjectUid, id);
    if (row === undefined) return undefined;
    return {
      callId: row.id,
      conversationId: row.conversation_id,
      matchedCount: row.matched_count,
      previousCallId: row.previous_call_id,
      answerMessageId: null,
    };
  }
}
