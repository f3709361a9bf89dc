import type { Kysely } from "kysely";
import { insertConversation } from "../store/repositories/gateway-conversations.js";
import {
  findPreviousCall,
  insertChainNodes,
  placeRecordedCall,
  replaceChainNodes,
  type ChainNodeRow,
  type RecordedCallRow,
} from "../store/repositories/recorded-calls.js";
import type { StoreSchema } from "../store/schema.js";
import { messageHash } from "./chain-matching.js";
import { newId } from "./ids.js";
import { writeRecordedHistory, type RecordedHistory } from "./recorded-history.js";
import { matchRecordedCall } from "./recorded-matching.js";
import { recordedAnswer } from "./recorded-messages.js";
import type { PrefixHashCache } from "./recorded-prefix-cache.js";
import { decodeBody, usageOf, type WireFormat } from "./recorded-usage.js";

/**
 * Places a stored call in its chain (docs/server.md, "Recorded calls"), inside a transaction
 * that holds the subject's lock: the longest prefix of its messages the subject already has
 * (recorded-matching.ts) names its conversation, and the messages past it become chain nodes
 * and gateway messages there, with the upstream's answer; the call's row gets its
 * conversation, previous call and usage, and is marked placed. What is placed is what the row
 * holds: with redaction on, the sanitized bodies.
 */
export interface CallToPlace {
  readonly id: string;
  readonly subjectUid: string;
  readonly format: WireFormat;
  readonly model: string;
  /** The request's `messages`. */
  readonly messages: readonly unknown[];
  readonly statusCode: number;
  /** As stored (no credentials). */
  readonly responseHeaders: Readonly<Record<string, string>>;
  /** As stored: still content-encoded unless redacted. */
  readonly responseBody: Buffer;
  readonly createdAt: string;
}

export interface RecordedCallResult {
  readonly callId: string;
  readonly conversationId: string;
  /** Messages of the request already stored before it. */
  readonly matchedCount: number;
  readonly previousCallId: string | null;
  /** The gateway message the upstream's answer became (null: none could be read or written). */
  readonly answerMessageId: string | null;
}

export interface PlacementOptions {
  readonly prefixes: PrefixHashCache;
  /** Write the history as gateway messages (false: the chain nodes and the row only). */
  readonly gatewayMessages: boolean;
  /** The database writes a chain in one statement (PostgreSQL). */
  readonly writesInWith: boolean;
}

export async function placeCall(
  db: Kysely<StoreSchema>,
  options: PlacementOptions,
  call: CallToPlace,
): Promise<RecordedCallResult> {
  const hashes = options.prefixes.prefixHashes(call.format, call.messages);
  const streamed = (call.responseHeaders["content-type"] ?? "").includes("text/event-stream");
  const decoded = decodeBody(call.responseBody, call.responseHeaders["content-encoding"]);
  const text = decoded === undefined ? "" : decoded.toString("utf8");
  const usage = usageOf(call.format, text, decoded !== undefined && streamed);
  const answer = recordedAnswer(call.format, call.model, call.statusCode, text, streamed);
  const { node: deepest, takeOver } = await matchRecordedCall(db, call.subjectUid, hashes);
  const matchedCount = deepest === undefined ? 0 : deepest.position + 1;
  let conversationId = deepest?.conversation_id;
  if (conversationId === undefined) {
    conversationId = newId("conv", Date.parse(call.createdAt));
    await insertConversation(db, {
      id: conversationId,
      subject_uid: call.subjectUid,
      created_at: call.createdAt,
      metadata: JSON.stringify({ recorded: call.format }),
    });
  }
  // The new messages and the answer as gateway messages of the conversation.
  const history: RecordedHistory = !options.gatewayMessages
    ? { messageIds: [], answerId: null }
    : await writeRecordedHistory(db, {
        subjectUid: call.subjectUid,
        conversationId,
        anchorMessageId: deepest?.anchor_message_id ?? null,
        format: call.format,
        messages: call.messages,
        from: matchedCount,
        answer,
        now: call.createdAt,
        writesInWith: options.writesInWith,
      });
  await (takeOver ? replaceChainNodes : insertChainNodes)(
    db,
    nodesOf(call, hashes, deepest, conversationId, history),
  );
  const previous = await findPreviousCall(db, call.subjectUid, hashes);
  await placeRecordedCall(db, call.id, {
    conversation_id: conversationId,
    tip_prefix_sha256: hashes[hashes.length - 1] ?? "",
    message_count: hashes.length,
    matched_count: matchedCount,
    previous_call_id: previous?.id ?? null,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
  });
  return {
    callId: call.id,
    conversationId,
    matchedCount,
    previousCallId: previous?.id ?? null,
    answerMessageId: history.answerId,
  };
}

/** The chain nodes of the call's messages past the match. */
function nodesOf(
  call: CallToPlace,
  hashes: readonly string[],
  deepest: ChainNodeRow | undefined,
  conversationId: string,
  history: RecordedHistory,
): ChainNodeRow[] {
  const matchedCount = deepest === undefined ? 0 : deepest.position + 1;
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
      created_at: call.createdAt,
      message_id: messageId,
      anchor_message_id: anchor,
      anchor_count: anchorCount,
    });
  }
  return nodes;
}

/** The `messages` of a request body's text ([] when it has none or is not JSON). */
export function messagesOfBody(text: string): unknown[] {
  try {
    const body = JSON.parse(text) as unknown;
    const value =
      body !== null && typeof body === "object" && !Array.isArray(body)
        ? (body as Record<string, unknown>)["messages"]
        : undefined;
    return Array.isArray(value) ? value : [];
  } catch {
    // Not JSON (the routes never send such a body upstream): no messages to place.
    return [];
  }
}

/** A stored row as a call to place (a call left unplaced by a crash, or another process's). */
export function callOfRow(row: RecordedCallRow): CallToPlace {
  return {
    id: row.id,
    subjectUid: row.subject_uid,
    format: row.wire_format as WireFormat,
    model: row.model,
    messages: messagesOfBody(row.request_body),
    statusCode: row.status_code,
    responseHeaders: JSON.parse(row.response_headers) as Record<string, string>,
    responseBody: Buffer.from(row.response_body_base64, "base64"),
    createdAt: row.created_at,
  };
}
