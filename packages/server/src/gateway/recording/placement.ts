import type { Kysely } from "kysely";
import type { RoundResult } from "verbatim-llm/providers";
import { insertConversation } from "../../store/repositories/gateway-conversations.js";
import {
  findDeepestNode,
  insertChainNodes,
  placeRecordedCall,
  replaceChainNodes,
  type ChainNodeRow,
  type RecordedCallRow,
} from "../../store/repositories/recorded-calls.js";
import {
  findPlacingState,
  keepMatchedCount,
  type PlacingState,
} from "../../store/repositories/recorded-placing.js";
import type { StoreSchema } from "../../store/schema.js";
import { nodeDeletion } from "../conversations/chain-deletions.js";
import { messageHash } from "./chain-matching.js";
import { newId } from "../ids.js";
import { writeRecordedHistory, type RecordedHistory } from "./history.js";
import { matchRecordedCall, type RecordedMatch } from "./matching.js";
import { recordedAnswer } from "./messages.js";
import type { PrefixHashCache } from "./prefix-cache.js";
import type { BodyReader } from "./bodies/body-reader.js";
import { ToolCallNames } from "./tool-names.js";
import {
  decodeBody,
  usageOf,
  wireMessagesKey,
  type RecordedUsage,
  type WireFormat,
} from "./usage.js";

/**
 * Places a stored call in its chain (docs/server/recorded-calls.md, "Recorded calls"), inside transactions that
 * hold the subject's lock: the longest prefix of its messages the subject already has
 * (matching.ts) names its conversation, and the messages past it become chain nodes
 * and gateway messages there, with the upstream's answer; the call's row gets its
 * conversation, previous call and usage, and is marked placed. What is placed is what the row
 * holds: with redaction on, the sanitized bodies. A call of many new messages is placed a slice
 * of them per transaction (`placeSlice`, run by placing.ts), each slice continuing the
 * one before as a later call continues an earlier one; the last one writes the answer and marks
 * the row. Until then the row is unplaced, so a placing cut off is resumed from its row.
 */
export interface CallToPlace {
  readonly id: string;
  readonly subjectUid: string;
  readonly format: WireFormat;
  readonly model: string;
  /** The request's messages (`messages`; Gemini's `contents`). */
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

/** Most wire messages, and most bytes of their JSON text, one transaction places. */
export interface SliceLimits {
  readonly messages: number;
  readonly bytes: number;
}

/** A call's placing, carried from one of its transactions to the next. */
export interface Placing {
  readonly call: CallToPlace;
  readonly hashes: readonly string[];
  readonly names: ToolCallNames;
  readonly answer: RoundResult | undefined;
  readonly usage: RecordedUsage;
  /** The subject's latest call whose last prefix this call's messages begin with. */
  readonly previousCallId: string | null;
  /** Set by the first transaction: what the call continues, and the conversation it is in. */
  start?: {
    readonly matchedCount: number;
    readonly takeOver: boolean;
    conversationId: string;
  };
  /** Wire messages placed so far. */
  placed: number;
  /** A slice the store could not hold as history: the call's later messages are left out too. */
  historyRefused: boolean;
}

/** The answer and usage of a call, read once for all its transactions. */
export function startPlacing(
  call: CallToPlace,
  hashes: readonly string[],
  previousCallId: string | null,
): Placing {
  const streamed = (call.responseHeaders["content-type"] ?? "").includes("text/event-stream");
  const decoded = decodeBody(call.responseBody, call.responseHeaders["content-encoding"]);
  const text = decoded === undefined ? "" : decoded.toString("utf8");
  return {
    call,
    hashes,
    names: new ToolCallNames(call.format, call.messages),
    answer: recordedAnswer(call.format, call.model, call.statusCode, text, streamed),
    usage: usageOf(call.format, text, decoded !== undefined && streamed),
    previousCallId,
    placed: 0,
    historyRefused: false,
  };
}

/** What one transaction of a placing did. */
export type SliceOutcome =
  | { readonly placed: RecordedCallResult }
  /** More messages are left for the next transaction. */
  | "more"
  /** The row is placed already (by another process) or gone. */
  | "elsewhere";

/** Places the next slice of the call's messages (all that are left, within the limits). */
export async function placeSlice(
  db: Kysely<StoreSchema>,
  options: PlacementOptions,
  placing: Placing,
  limits: SliceLimits,
): Promise<SliceOutcome> {
  const { call, hashes } = placing;
  const state = await findPlacingState(db, call.subjectUid, call.id);
  if (state === undefined || state.conversation_id !== "") return "elsewhere";
  const { node: deepest, takeOver } = await continuation(db, placing, state);
  const from = deepest === undefined ? 0 : deepest.position + 1;
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
  const start = placing.start as NonNullable<Placing["start"]>;
  start.conversationId = conversationId;
  const until = sliceEnd(call.messages, from, limits);
  const last = until >= hashes.length;
  // The new messages and the answer as gateway messages of the conversation.
  const history: RecordedHistory =
    !options.gatewayMessages || placing.historyRefused
      ? { messageIds: [], answerId: null }
      : await writeRecordedHistory(db, {
          subjectUid: call.subjectUid,
          callId: call.id,
          conversationId,
          anchorMessageId: deepest?.anchor_message_id ?? null,
          format: call.format,
          messages: call.messages,
          from,
          until,
          names: placing.names,
          answer: placing.answer,
          now: call.createdAt,
          writesInWith: options.writesInWith,
        });
  if (history.refused === true) placing.historyRefused = true;
  await (takeOver ? replaceChainNodes : insertChainNodes)(
    db,
    nodesOf(call, hashes, deepest, until, conversationId, history),
  );
  placing.placed = until;
  if (!last) {
    if (from === start.matchedCount)
      await keepMatchedCount(db, call.subjectUid, call.id, start.matchedCount);
    return "more";
  }
  await placeRecordedCall(db, call.subjectUid, call.id, {
    conversation_id: conversationId,
    tip_prefix_sha256: hashes[hashes.length - 1] ?? "",
    message_count: hashes.length,
    matched_count: start.matchedCount,
    previous_call_id: placing.previousCallId,
    input_tokens: placing.usage.inputTokens,
    output_tokens: placing.usage.outputTokens,
    cache_read_tokens: placing.usage.cacheReadTokens,
    cache_write_tokens: placing.usage.cacheWriteTokens,
  });
  return {
    placed: {
      callId: call.id,
      conversationId,
      matchedCount: start.matchedCount,
      previousCallId: placing.previousCallId,
      answerMessageId: history.answerId,
    },
  };
}

/**
 * Where this transaction continues the call's chain. The first matches the call's messages
 * (matching.ts); when the deepest match is a node an earlier, cut-off placing of this
 * call wrote (its time is the call's), the count stored before the call is the one that placing
 * kept in the row. A later one continues the node of the last message placed, or a deeper one
 * of the same conversation (another process went on placing it meanwhile); it matches afresh
 * when that node is gone from the conversation or names what the subject deleted since.
 */
async function continuation(
  db: Kysely<StoreSchema>,
  placing: Placing,
  state: PlacingState,
): Promise<RecordedMatch> {
  const { call, hashes, start } = placing;
  if (start !== undefined && placing.placed > 0) {
    const ours = (hash: string | undefined) =>
      hash === undefined ? undefined : findDeepestNode(db, call.subjectUid, [hash]);
    const further = await ours(hashes[placing.placed]);
    let node = further === undefined ? await ours(hashes[placing.placed - 1]) : undefined;
    if (further !== undefined) {
      const deepest = await findDeepestNode(db, call.subjectUid, hashes);
      node =
        deepest?.conversation_id === start.conversationId
          ? deepest
          : await ours(hashes[placing.placed - 1]);
    }
    if (
      node !== undefined &&
      node.conversation_id === start.conversationId &&
      (await nodeDeletion(db, call.subjectUid, node)) === "none"
    ) {
      return { node, takeOver: start.takeOver };
    }
  }
  const match = await matchRecordedCall(db, call.subjectUid, hashes);
  if (start === undefined) {
    const resumed = match.node !== undefined && match.node.created_at === call.createdAt;
    placing.start = {
      matchedCount: resumed
        ? state.matched_count
        : match.node === undefined
          ? 0
          : match.node.position + 1,
      takeOver: match.takeOver,
      conversationId: "",
    };
  }
  return match;
}

/** The end of the slice that starts at `from`: at least one message, within the limits. */
function sliceEnd(messages: readonly unknown[], from: number, limits: SliceLimits): number {
  let end = from;
  let bytes = 0;
  while (end < messages.length && end - from < limits.messages) {
    bytes += (JSON.stringify(messages[end]) ?? "").length;
    if (bytes > limits.bytes && end > from) break;
    end++;
  }
  return end;
}

/** The chain nodes of the call's messages past the match, up to `until`. */
function nodesOf(
  call: CallToPlace,
  hashes: readonly string[],
  deepest: ChainNodeRow | undefined,
  until: number,
  conversationId: string,
  history: RecordedHistory,
): ChainNodeRow[] {
  const matchedCount = deepest === undefined ? 0 : deepest.position + 1;
  const nodes: ChainNodeRow[] = [];
  let anchor = deepest?.anchor_message_id ?? null;
  let anchorCount = deepest?.anchor_count ?? null;
  for (let position = matchedCount; position < until; position++) {
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

/** The messages of a request body's text ([] when it has none or is not JSON). */
export function messagesOfBody(text: string, format?: WireFormat): unknown[] {
  try {
    const body = JSON.parse(text) as unknown;
    const value =
      body !== null && typeof body === "object" && !Array.isArray(body)
        ? (body as Record<string, unknown>)[wireMessagesKey(format)]
        : undefined;
    return Array.isArray(value) ? value : [];
  } catch {
    // Not JSON (the routes never send such a body upstream): no messages to place.
    return [];
  }
}

/** A stored row as a call to place (a call left unplaced by a crash, or another process's). */
export async function callOfRow(row: RecordedCallRow, reader: BodyReader): Promise<CallToPlace> {
  const request = await reader.request(row);
  const response = await reader.response(row);
  return {
    id: row.id,
    subjectUid: row.subject_uid,
    format: row.wire_format as WireFormat,
    model: row.model,
    messages: messagesOfBody(request.toString("utf8"), row.wire_format as WireFormat),
    statusCode: row.status_code,
    responseHeaders: JSON.parse(row.response_headers) as Record<string, string>,
    responseBody: response,
    createdAt: row.created_at,
  };
}
