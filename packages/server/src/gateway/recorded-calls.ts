import { createSanitizer, type Sanitizer } from "verbatim-llm/trajectory";
import type { StoreDatabase } from "../store/index.js";
import { insertConversation } from "../store/repositories/gateway-conversations.js";
import {
  findDeepestNode,
  findPreviousCall,
  insertChainNodes,
  insertRecordedCall,
  lockSubjectForRecording,
  type ChainNodeRow,
} from "../store/repositories/recorded-calls.js";
import { inTransaction } from "../store/transaction.js";
import { messageHash } from "./chain-matching.js";
import { PrefixHashCache } from "./recorded-prefix-cache.js";
import { newId } from "./ids.js";
import { writeRecordedHistory, type RecordedHistory } from "./recorded-history.js";
import { recordedAnswer } from "./recorded-messages.js";
import { decodeBody, usageOf, type WireFormat } from "./recorded-usage.js";

/**
 * Records the model calls of the pass-through routes as chains (docs/server.md, "Recorded
 * calls"). A call's messages are hashed (gateway/chain-matching.ts); the longest prefix of them
 * the subject already has names its conversation, and the messages past it become new nodes
 * there: a request that extends a chain continues it, one that diverges inside it forks it
 * (the new nodes hang off the last shared one), and one whose first message is new starts a
 * conversation. One subject's calls are recorded one at a time (SQLite's write lock, a
 * PostgreSQL advisory lock), so concurrent calls of one session never split a chain.
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
}

export interface RecordedCallResult {
  readonly callId: string;
  readonly conversationId: string;
  /** Messages of the request already stored before it. */
  readonly matchedCount: number;
  readonly previousCallId: string | null;
  /** The gateway message the upstream's answer became (null: no answer could be read). */
  readonly answerMessageId: string | null;
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
  /** The prefix hashes of each session's last call, reused by its next (recorded-prefix-cache). */
  readonly prefixes = new PrefixHashCache();

  private readonly gatewayMessages: boolean;

  constructor(
    private readonly database: StoreDatabase,
    options: RecordedCallsOptions = {},
  ) {
    this.sanitizer = options.redact === true ? createSanitizer() : undefined;
    this.gatewayMessages = options.gatewayMessages !== false;
  }

  async record(call: CallToRecord): Promise<RecordedCallResult> {
    const hashes = this.prefixes.prefixHashes(call.format, call.messages);
    const streamed = (call.responseHeaders["content-type"] ?? "").includes("text/event-stream");
    const decoded = decodeBody(call.responseBody, call.responseHeaders["content-encoding"]);
    const usage =
      decoded === undefined
        ? usageOf(call.format, "", false)
        : usageOf(call.format, decoded.toString("utf8"), streamed);
    let requestBody = call.requestBody.toString("utf8");
    let responseBody = call.responseBody;
    if (this.sanitizer !== undefined) {
      requestBody = this.sanitizer.sanitizeText(requestBody).value;
      // A body the server cannot decode is not kept at all rather than kept unredacted.
      responseBody =
        decoded === undefined
          ? Buffer.alloc(0)
          : Buffer.from(this.sanitizer.sanitizeText(decoded.toString("utf8")).value, "utf8");
    }
    const responseHeaders = withoutCredentials(call.responseHeaders);
    if (this.sanitizer !== undefined && decoded !== undefined) {
      delete responseHeaders["content-encoding"];
      delete responseHeaders["content-length"];
    }
    const answer = recordedAnswer(
      call.format,
      call.model,
      call.statusCode,
      decoded === undefined ? "" : decoded.toString("utf8"),
      streamed,
    );
    const now = new Date();
    const createdAt = now.toISOString();
    return inTransaction(this.database, async (db) => {
      if (this.database.capabilities.advisoryLocks) {
        await lockSubjectForRecording(db, call.subjectUid);
      }
      const deepest = await findDeepestNode(db, call.subjectUid, hashes);
      const matchedCount = deepest === undefined ? 0 : deepest.position + 1;
      let conversationId = deepest?.conversation_id;
      if (conversationId === undefined) {
        conversationId = newId("conv", now.getTime());
        await insertConversation(db, {
          id: conversationId,
          subject_uid: call.subjectUid,
          created_at: createdAt,
          metadata: JSON.stringify({ recorded: call.format }),
        });
      }
      // The new messages and the answer as gateway messages of the conversation.
      const history: RecordedHistory = !this.gatewayMessages
        ? { messageIds: [], answerId: null }
        : await writeRecordedHistory(db, {
            subjectUid: call.subjectUid,
            conversationId,
            anchorMessageId: deepest?.anchor_message_id ?? null,
            format: call.format,
            messages: call.messages,
            from: matchedCount,
            answer,
            now: createdAt,
            writesInWith: this.database.capabilities.writesInWith,
          });
      const nodes: ChainNodeRow[] = [];
      let anchor = deepest?.anchor_message_id ?? null;
      let anchorCount = deepest?.anchor_count ?? null;
      for (let position = matchedCount; position < hashes.length; position++) {
        const messageId = history.messageIds[position - matchedCount] ?? null;
        if (messageId !== null) {
          anchor = messageId;
          anchorCount = position + 1;
        }
        nodes.push({
          subject_uid: call.subjectUid,
          prefix_sha256: hashes[position] as string,
          conversation_id: conversationId,
          parent_prefix_sha256: position === 0 ? null : (hashes[position - 1] as string),
          position,
          message_sha256: messageHash(call.messages[position]),
          created_at: createdAt,
          message_id: messageId,
          anchor_message_id: anchor,
          anchor_count: anchorCount,
        });
      }
      await insertChainNodes(db, nodes);
      const previous = await findPreviousCall(db, call.subjectUid, hashes);
      const callId = newId("call", now.getTime());
      await insertRecordedCall(db, {
        id: callId,
        subject_uid: call.subjectUid,
        conversation_id: conversationId,
        wire_format: call.format,
        path: call.path,
        model: call.model,
        tip_prefix_sha256: hashes[hashes.length - 1] ?? "",
        message_count: hashes.length,
        matched_count: matchedCount,
        previous_call_id: previous?.id ?? null,
        status_code: call.statusCode,
        request_headers: JSON.stringify(withoutCredentials(call.requestHeaders)),
        request_body: requestBody,
        response_headers: JSON.stringify(responseHeaders),
        response_body_base64: responseBody.toString("base64"),
        redacted: this.sanitizer === undefined ? 0 : 1,
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        cache_read_tokens: usage.cacheReadTokens,
        cache_write_tokens: usage.cacheWriteTokens,
        duration_ms: Math.round(call.durationMs),
        created_at: createdAt,
      });
      return {
        callId,
        conversationId,
        matchedCount,
        previousCallId: previous?.id ?? null,
        answerMessageId: history.answerId,
      };
    });
  }
}
