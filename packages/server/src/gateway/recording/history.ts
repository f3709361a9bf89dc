import type { Kysely } from "kysely";
import { isVerbatimError } from "verbatim-llm/core";
import type { RoundResult } from "verbatim-llm/providers";
import { isMessageOrItsConversationDeleted } from "../../store/repositories/gateway-caller-deletions.js";
import { findContinuationRows } from "../../store/repositories/gateway-messages.js";
import type { StoreSchema } from "../../store/schema.js";
import { appendWithinTransaction } from "../conversations/append.js";
import { keepImages, type HeldImage } from "../conversations/images.js";
import { responseUnits, type MatchableMessage } from "./chain-matching.js";
import { matchable } from "../conversations/message-chains.js";
import { prepareAppend, type AppendMessageInput } from "../conversations/prepare-append.js";
import { recordedMessagesOf, providerOfFormat } from "./messages.js";
import { ToolCallNames } from "./tool-names.js";
import type { WireFormat } from "./usage.js";
import { messageFromRow } from "../conversations/rows.js";
import { DEFAULT_GATEWAY_LIMITS } from "../validation/checks.js";

/**
 * Writes a recorded call's new wire messages and its answer as gateway messages of the chain's
 * conversation (docs/server/recorded-calls.md, "Recorded calls"), inside the call's transaction: one chain of
 * a session is one gateway conversation whose messages are its messages. The answer of the
 * previous call, which the client sends back as its next request's first new message, is not
 * written twice: that message is the stored answer when their text and tool calls are equal.
 */
export interface RecordedHistoryInput {
  readonly subjectUid: string;
  /** The recorded call the messages come from (named on its answer). */
  readonly callId: string;
  readonly conversationId: string;
  /** The gateway message the matched prefix ends with (null: a new chain). */
  readonly anchorMessageId: string | null;
  readonly format: WireFormat;
  readonly messages: readonly unknown[];
  /** The first wire message that is not stored yet. */
  readonly from: number;
  /**
   * The wire message to stop before (default: all of them). The answer is written only after
   * the request's last message: a long request is written in slices (placing.ts).
   */
  readonly until?: number;
  /** The request's tool call names, kept from one slice to the next. */
  readonly names?: ToolCallNames;
  readonly answer: RoundResult | undefined;
  readonly now: string;
  /** The database writes a chain in one statement (PostgreSQL). */
  readonly writesInWith: boolean;
}

export interface RecordedHistory {
  /** Per wire message from `from` on: the last gateway message it became (null: none written). */
  readonly messageIds: readonly (string | null)[];
  /** The answer's gateway message, when one was written. */
  readonly answerId: string | null;
  /** The store could not hold these messages as history (they are left out). */
  readonly refused?: true;
}

/** Messages per append: the store's limit of one write. */
const PER_WRITE = DEFAULT_GATEWAY_LIMITS.maxMessagesPerWrite;

const sameUnits = (a: MatchableMessage, b: MatchableMessage): boolean =>
  JSON.stringify(responseUnits(a)) === JSON.stringify(responseUnits(b));

/**
 * The stored answer after `anchor` that this wire message gives back, if any. An answer the
 * subject deleted is not given back: the message is written again beside it (a fork there).
 */
async function storedAnswer(
  db: Kysely<StoreSchema>,
  input: RecordedHistoryInput,
  names: ToolCallNames,
  anchor: string,
): Promise<string | undefined> {
  const [message] = recordedMessagesOf(input.format, input.messages, input.from, names);
  if (message === undefined || message.role !== "assistant") return undefined;
  for (const row of await findContinuationRows(db, input.subjectUid, anchor)) {
    const stored = messageFromRow(row);
    if (stored.metadata.gateway.model === undefined) continue;
    if (!sameUnits(matchable(stored), message)) continue;
    if (await isMessageOrItsConversationDeleted(db, input.subjectUid, stored.id)) continue;
    return stored.id;
  }
  return undefined;
}

export async function writeRecordedHistory(
  db: Kysely<StoreSchema>,
  input: RecordedHistoryInput,
): Promise<RecordedHistory> {
  const messageIds: (string | null)[] = [];
  let anchor = input.anchorMessageId;
  let from = input.from;
  const until = Math.min(input.until ?? input.messages.length, input.messages.length);
  const names = input.names ?? new ToolCallNames(input.format, input.messages);
  if (anchor !== null && from < until) {
    const answer = await storedAnswer(db, input, names, anchor);
    if (answer !== undefined) {
      messageIds.push(answer);
      anchor = answer;
      from++;
    }
  }
  const owners: number[] = [];
  const messages: AppendMessageInput[] = [];
  const images: HeldImage[] = [];
  for (let index = from; index < until; index++) {
    for (const message of recordedMessagesOf(input.format, input.messages, index, names)) {
      owners.push(index);
      images.push(...(message.images ?? []));
      const gateway = {
        ...(message.inputRole === undefined ? {} : { inputRole: message.inputRole }),
        ...(message.imageUrls === undefined ? {} : { imageUrls: message.imageUrls }),
      };
      messages.push({
        role: message.role,
        content: message.content,
        ...(Object.keys(gateway).length === 0 ? {} : { gateway }),
      });
    }
  }
  const answer = until === input.messages.length ? input.answer : undefined;
  if (answer !== undefined) {
    owners.push(-1);
    messages.push({
      role: "assistant",
      content: answer.message.content,
      status: answer.stopReason === "max_tokens" ? "incomplete" : "completed",
      gateway: {
        model: answer.model,
        provider: providerOfFormat(input.format),
        usage: answer.usage,
        stopReason: answer.stopReason,
        ...(answer.responseId === undefined ? {} : { providerResponseId: answer.responseId }),
        recordedCallId: input.callId,
      },
    });
  }
  const none: RecordedHistory = {
    messageIds: [...messageIds, ...Array.from({ length: until - from }, () => null)],
    answerId: null,
  };
  if (messages.length === 0) return none;
  let prepared;
  try {
    prepared = prepareAppend(
      input.subjectUid,
      { previousMessageId: anchor, conversationId: input.conversationId, messages },
      { ...DEFAULT_GATEWAY_LIMITS, maxMessagesPerWrite: Number.MAX_SAFE_INTEGER },
    );
  } catch (error) {
    // What the store cannot hold as history (a lone surrogate, an oversized text) is still
    // recorded byte for byte in the call's row; only its gateway messages are left out.
    if (isVerbatimError(error)) return { ...none, refused: true };
    throw error;
  }
  // The images' bytes, once per subject and SHA-256, as /v1/responses keeps them.
  await keepImages(db, input.subjectUid, images, input.now);
  const ids: string[] = [];
  for (let start = 0; start < prepared.messages.length; start += PER_WRITE) {
    const rows = await appendWithinTransaction(
      db,
      {
        subjectUid: input.subjectUid,
        conversationId: input.conversationId,
        previousMessageId: anchor,
        messages: prepared.messages.slice(start, start + PER_WRITE),
        conversationMetadata: {},
        now: input.now,
      },
      input.writesInWith,
    );
    for (const row of rows) ids.push(row.id);
    anchor = rows[rows.length - 1]?.id ?? anchor;
  }
  const lastOf = new Map<number, string>();
  owners.forEach((owner, index) => lastOf.set(owner, ids[index] as string));
  for (let index = from; index < until; index++) {
    messageIds.push(lastOf.get(index) ?? null);
  }
  return { messageIds, answerId: lastOf.get(-1) ?? null };
}
