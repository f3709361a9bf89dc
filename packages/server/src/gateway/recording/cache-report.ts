import type { StoreDatabase } from "../../store/index.js";
import { conversationOwner } from "../../store/repositories/console-queries.js";
import {
  findCallsById,
  listCallsOfConversation,
  listRecordedCalls,
  type RecordedCallRow,
} from "../../store/repositories/recorded-calls.js";
import {
  cacheEntries,
  summarise,
  type CallCacheEntry,
  type ConversationCacheSummary,
} from "./cache.js";
import { BodyReader } from "./bodies/body-reader.js";
import type { CallCacheVerdict } from "./call-bytes.js";

/** Reads requests as text, each piece once for the whole report. */
function requestTexts(database: StoreDatabase): (call: RecordedCallRow) => Promise<string> {
  const reader = new BodyReader(database.db);
  return async (call) => (await reader.request(call)).toString("utf8");
}

/** One conversation's cache report: the summary and every call (docs/server/recorded-calls.md, "Cache report"). */
export interface ConversationCacheReport {
  readonly summary: ConversationCacheSummary;
  readonly calls: readonly CallCacheEntry[];
}

/** The calls and the previous calls they name (each its own subject's call), by id. */
async function withPrevious(
  database: StoreDatabase,
  calls: readonly RecordedCallRow[],
): Promise<Map<string, RecordedCallRow>> {
  const byId = new Map(calls.map((call) => [call.id, call]));
  const missing = new Map<string, Set<string>>();
  for (const call of calls) {
    if (call.previous_call_id === null || byId.has(call.previous_call_id)) continue;
    const ids = missing.get(call.subject_uid) ?? new Set<string>();
    ids.add(call.previous_call_id);
    missing.set(call.subject_uid, ids);
  }
  for (const [subjectUid, ids] of missing) {
    for (const row of await findCallsById(database.db, subjectUid, [...ids])) byId.set(row.id, row);
  }
  return byId;
}

/**
 * The report of one conversation; undefined when it has no recorded call. Without its subject
 * (the operator's route, given the id alone) the conversation's owner is found first.
 */
export async function conversationCacheReport(
  database: StoreDatabase,
  conversationId: string,
  subjectUid?: string,
): Promise<ConversationCacheReport | undefined> {
  const owner = subjectUid ?? (await conversationOwner(database, conversationId));
  if (owner === undefined) return undefined;
  const calls = await listCallsOfConversation(database.db, owner, conversationId);
  const first = calls[0];
  if (first === undefined) return undefined;
  const entries = await cacheEntries(
    calls,
    await withPrevious(database, calls),
    requestTexts(database),
  );
  return { summary: summarise(conversationId, first.subject_uid, entries), calls: entries };
}

/** The reports of every conversation with calls in the filter, oldest conversation first. */
export async function cacheReports(
  database: StoreDatabase,
  filter: { readonly subjectUid?: string; readonly since?: string },
): Promise<ConversationCacheReport[]> {
  const calls = await listRecordedCalls(database.db, filter);
  const previous = await withPrevious(database, calls);
  const groups = new Map<string, RecordedCallRow[]>();
  for (const call of calls) {
    const group = groups.get(call.conversation_id) ?? [];
    group.push(call);
    groups.set(call.conversation_id, group);
  }
  const texts = requestTexts(database);
  const reports: ConversationCacheReport[] = [];
  for (const [conversationId, group] of groups) {
    const entries = await cacheEntries(group, previous, texts);
    reports.push({
      summary: summarise(conversationId, group[0]?.subject_uid ?? "", entries),
      calls: entries,
    });
  }
  return reports;
}

/** One call's verdict: its entry of the cache report, against its previous call. */
export async function callCacheVerdict(
  database: StoreDatabase,
  call: RecordedCallRow,
): Promise<CallCacheVerdict> {
  const [entry] = await cacheEntries(
    [call],
    await withPrevious(database, [call]),
    requestTexts(database),
  );
  if (entry === undefined) throw new Error("a cache entry per call");
  return {
    status: entry.cache,
    hit_ratio: entry.hit_ratio,
    lost_tokens: entry.lost_tokens,
    lost_dollars: entry.lost_dollars,
    difference: entry.difference,
  };
}
