import type { Kysely } from "kysely";
import type { StoreDatabase } from "../../store/database.js";
import {
  deleteHistoryBackfill,
  listConversationNodes,
  listHistoryBackfills,
  type HistoryBackfillRow,
} from "../../store/repositories/recorded-backfills.js";
import {
  listCallsOfConversation,
  lockSubjectForRecording,
  replaceChainNodes,
  type ChainNodeRow,
  type RecordedCallRow,
} from "../../store/repositories/recorded-calls.js";
import type { StoreSchema } from "../../store/schema.js";
import { inTransaction } from "../../store/transaction.js";
import { BodyReader } from "./bodies/body-reader.js";
import { writeRecordedHistory } from "./history.js";
import { recordedAnswer } from "./messages.js";
import { callOfRow } from "./placement.js";
import { decodeBody } from "./usage.js";

/**
 * Writes the history of conversations recorded before migration 0010 (docs/server/recorded-calls.md,
 * "Recorded calls"): their calls kept their bytes and chain nodes but no gateway messages, and
 * their nodes name none. Each conversation listed by migration 0012 is done in one transaction
 * under its subject's recording lock: its calls, oldest first, are written as the recorder
 * writes a call now (each call's messages past its `matched_count`, then its answer, continuing
 * the message its matched prefix ends with), from the bytes the call's row holds, and the nodes
 * each call added get the messages they name. The conversation keeps its id, its calls and its
 * nodes, so the cache report and every link to it are unchanged, and a later call continues it
 * like any other. Idempotent and safe to run from several processes at once (a conversation is
 * taken off the list in the transaction that writes it).
 */
export interface BackfillReport {
  readonly conversations: number;
  readonly calls: number;
}

/** What a start or `verbatim db migrate` says when it wrote some. */
export function backfillLine(report: BackfillReport): string {
  return `wrote the history of ${report.conversations} conversation(s) recorded before migration 0010 (${report.calls} call(s)) as gateway messages`;
}

/** Conversations read from the list at a time. */
const BATCH = 100;

export async function backfillRecordedHistory(database: StoreDatabase): Promise<BackfillReport> {
  let conversations = 0;
  let calls = 0;
  for (;;) {
    const batch = await listHistoryBackfills(database.db, BATCH);
    if (batch.length === 0) return { conversations, calls };
    for (const pending of batch) {
      const written = await inTransaction(database, async (db) => {
        if (database.capabilities.advisoryLocks) {
          await lockSubjectForRecording(db, pending.subject_uid);
        }
        if (!(await deleteHistoryBackfill(db, pending))) return undefined;
        return backfillConversation(db, pending, database.capabilities.writesInWith);
      });
      if (written === undefined) continue;
      conversations++;
      calls += written;
    }
  }
}

/** The request's messages and the upstream's answer, as the row keeps them. */
async function readCall(row: RecordedCallRow, reader: BodyReader) {
  const call = await callOfRow(row, reader);
  const decoded = decodeBody(call.responseBody, call.responseHeaders["content-encoding"]);
  const answer = recordedAnswer(
    call.format,
    call.model,
    call.statusCode,
    decoded === undefined ? "" : decoded.toString("utf8"),
    (call.responseHeaders["content-type"] ?? "").includes("text/event-stream"),
  );
  return { format: call.format, messages: call.messages, answer };
}

/** The nodes of a call's messages, by position (undefined when its path is not whole). */
function pathOf(
  nodes: ReadonlyMap<string, ChainNodeRow>,
  row: RecordedCallRow,
): ChainNodeRow[] | undefined {
  const path: ChainNodeRow[] = [];
  let node = nodes.get(row.tip_prefix_sha256);
  while (node !== undefined) {
    path.push(node);
    node = node.parent_prefix_sha256 === null ? undefined : nodes.get(node.parent_prefix_sha256);
  }
  path.reverse();
  const whole = path.length === row.message_count && path.every((n, i) => n.position === i);
  return whole ? path : undefined;
}

/** Writes one conversation's history; the number of calls whose messages were written. */
async function backfillConversation(
  db: Kysely<StoreSchema>,
  pending: HistoryBackfillRow,
  writesInWith: boolean,
): Promise<number> {
  const nodes = new Map<string, ChainNodeRow>();
  for (const node of await listConversationNodes(db, pending.subject_uid, pending.conversation_id))
    nodes.set(node.prefix_sha256, node);
  let written = 0;
  const reader = new BodyReader(db);
  for (const row of await listCallsOfConversation(
    db,
    pending.subject_uid,
    pending.conversation_id,
  )) {
    if (row.subject_uid !== pending.subject_uid) continue;
    const { format, messages, answer } = await readCall(row, reader);
    const path = row.message_count === 0 ? [] : pathOf(nodes, row);
    // A body that is not JSON has no messages: only a call of none has a history to write.
    if (path === undefined || messages.length !== path.length) continue;
    const matched = Math.min(row.matched_count, path.length);
    const deepest = matched === 0 ? undefined : path[matched - 1];
    const history = await writeRecordedHistory(db, {
      subjectUid: pending.subject_uid,
      callId: row.id,
      conversationId: pending.conversation_id,
      anchorMessageId: deepest?.anchor_message_id ?? null,
      format,
      messages,
      from: matched,
      answer,
      now: row.created_at,
      writesInWith,
    });
    // The nodes this call added name the messages they became, as the recorder's do.
    let anchor = deepest?.anchor_message_id ?? null;
    let anchorCount = deepest?.anchor_count ?? null;
    const named: ChainNodeRow[] = [];
    for (let position = matched; position < path.length; position++) {
      const messageId = history.messageIds[position - matched] ?? null;
      if (messageId !== null) {
        anchor = messageId;
        anchorCount = position + 1;
      }
      const node = {
        ...(path[position] as ChainNodeRow),
        message_id: messageId,
        anchor_message_id: anchor,
        anchor_count: anchorCount,
      };
      nodes.set(node.prefix_sha256, node);
      named.push(node);
    }
    await replaceChainNodes(db, named);
    written++;
  }
  return written;
}
