import type { ImportedConversation, LeftOutEntry } from "verbatim-llm/interop";
import type { CallsOutsideHistoryFacts } from "../conversations/message-types.js";
import { parseStoredMetadata } from "../conversations/rows.js";
import { findMessageRow } from "../../store/repositories/gateway-messages.js";
import type { ImportedChainRows } from "./chain-rows.js";
import { callsOutsideHistoryFacts } from "./outside-calls.js";

const WHAT = "usage of model calls outside the history";

/**
 * The report's entry when the store does not keep an imported conversation's calls outside the
 * history as this run read them (never silently): a conversation without history has no message
 * to keep them on; a first message stored by an earlier run keeps the figures of that run
 * (stored messages are never rewritten), so calls the source added or placed since are named.
 * Undefined when the store keeps them.
 */
export async function outsideCallsNotKept(
  rows: ImportedChainRows,
  imported: ImportedConversation,
  outcome: { readonly outcome: string; readonly firstMessageId?: string | undefined },
): Promise<LeftOutEntry | undefined> {
  const read = callsOutsideHistoryFacts(imported, new Date(rows.now()));
  if (outcome.outcome === "empty") {
    return read === undefined
      ? undefined
      : entry(
          imported,
          `the conversation has no history, so no stored message keeps the usage of its ${describe(read)}; a package import counts it in the conversation's totals`,
        );
  }
  // An unchanged history without such calls had none before either (their number falls only
  // when a new answer takes one): a re-run of such conversations reads nothing more.
  const check =
    outcome.outcome === "extended" || (outcome.outcome === "unchanged" && read !== undefined);
  if (!check || outcome.firstMessageId === undefined) return undefined;
  // Written earlier in this run and not committed yet: it holds this run's figures.
  const row = await findMessageRow(rows.database.db, rows.subject, outcome.firstMessageId);
  if (row === undefined) return undefined;
  const stored = parseStoredMetadata(row, row.metadata).gateway.callsOutsideHistory;
  if (sameCounts(stored, read)) return undefined;
  return entry(
    imported,
    `the history's first message was stored by an earlier import with ${stored === undefined ? "no calls outside the history" : describe(stored)}, and the source now has ${read === undefined ? "none" : describe(read)} (a request failed, or was placed on a message, since); stored messages are never rewritten, so the store keeps the earlier figures: import into another subject, or into a package, for the new ones`,
  );
}

function sameCounts(
  a: CallsOutsideHistoryFacts | undefined,
  b: CallsOutsideHistoryFacts | undefined,
): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.calls === b.calls &&
    a.usage.input === b.usage.input &&
    a.usage.output === b.usage.output &&
    a.usage.cacheRead === b.usage.cacheRead &&
    a.usage.cacheWrite === b.usage.cacheWrite
  );
}

function describe(facts: CallsOutsideHistoryFacts): string {
  const { calls, usage } = facts;
  return `${calls} model call${calls === 1 ? "" : "s"} outside the history (tokens in ${usage.input}, cache read ${usage.cacheRead}, cache write ${usage.cacheWrite}, out ${usage.output})`;
}

function entry(imported: ImportedConversation, reason: string): LeftOutEntry {
  return { file: imported.file, what: WHAT, reason, count: 0, lines: [] };
}
