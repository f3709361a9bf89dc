import type { ImportedCall, ImportedConversation } from "verbatim-llm/interop";
import { requestCost } from "verbatim-llm/pricing";
import type { CallsOutsideHistoryFacts } from "../conversations/message-types.js";

/** Computed once per imported conversation (each of its writes asks again). */
const factsOf = new WeakMap<ImportedConversation, CallsOutsideHistoryFacts | null>();

/**
 * The facts the first message of an imported history keeps about the source's model calls that
 * end no message of it (ImportedConversation.callsOutsideHistory): their count, their tokens
 * summed, and their cost priced one call at a time, as the console prices a stored call (the
 * reported cost, else an estimate from the price table for its model at `at`), because a sum
 * of calls priced as one would cross a long-context price tier none of them reached. Built in
 * the schema's key order (call-facts.ts). Undefined when there are none.
 */
export function callsOutsideHistoryFacts(
  imported: ImportedConversation,
  at: Date,
): CallsOutsideHistoryFacts | undefined {
  let facts = factsOf.get(imported);
  if (facts === undefined) {
    facts = summed(imported.callsOutsideHistory ?? [], at) ?? null;
    factsOf.set(imported, facts);
  }
  return facts ?? undefined;
}

function summed(calls: readonly ImportedCall[], at: Date): CallsOutsideHistoryFacts | undefined {
  if (calls.length === 0) return undefined;
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 };
  let oneHour = 0;
  let dollars = 0;
  const kinds = { reported: 0, estimated: 0, unknown: 0 };
  for (const call of calls) {
    usage.input += call.usage.input;
    usage.output += call.usage.output;
    usage.cacheRead += call.usage.cacheRead;
    usage.cacheWrite += call.usage.cacheWrite;
    usage.webSearchRequests += call.usage.webSearchRequests;
    oneHour += call.usage.cacheWrite1h ?? 0;
    const cost =
      call.usage.reportedCost !== undefined
        ? { kind: "reported" as const, dollars: call.usage.reportedCost }
        : call.model === undefined || call.provider === undefined
          ? { kind: "unknown" as const }
          : requestCost({ provider: call.provider, model: call.model, usage: call.usage, at });
    if (cost.kind === "reported" || cost.kind === "estimated") {
      dollars += Math.max(0, cost.dollars);
      kinds[cost.kind] += 1;
    } else kinds.unknown += 1;
  }
  return {
    calls: calls.length,
    usage: oneHour === 0 ? usage : { ...usage, cacheWrite1h: oneHour },
    dollars,
    ...kinds,
  };
}
