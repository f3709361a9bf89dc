import { isVerbatimError } from "verbatim-llm/core";
import type { Message } from "verbatim-llm/history";
import type { ImportedCall, ImportedConversation } from "verbatim-llm/interop";
import type { GatewayFacts } from "../conversations/message-types.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import { parseGatewayFacts } from "../validation/gateway-facts.js";
import { callsOutsideHistoryFacts } from "./outside-calls.js";

/**
 * The gateway facts of an imported message (docs/store.md, "Metadata"): on an assistant message
 * that ends a model call, the call's model, provider and usage, kept as the gateway keeps them
 * on the answers of recorded calls, so that the console shows the message's tokens and cost;
 * on the history's first message, also the calls that end no message of the history
 * (outside-calls.ts, priced at `at`). Undefined for every other message. Built in the schema's
 * key order, so that they are stored as `appendMessages` stores them after its check.
 */
export function importedCallFacts(
  imported: ImportedConversation,
  message: Message,
  at: Date,
): GatewayFacts | undefined {
  const outside =
    message === imported.conversation.history[0]
      ? callsOutsideHistoryFacts(imported, at)
      : undefined;
  const facts = callFacts(imported, message);
  if (outside === undefined) return facts;
  return { ...facts, callsOutsideHistory: outside };
}

function callFacts(imported: ImportedConversation, message: Message): GatewayFacts | undefined {
  const call = imported.calls?.get(message);
  if (call === undefined) return undefined;
  const { usage } = call;
  const counts = {
    input: usage.input,
    output: usage.output,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    webSearchRequests: usage.webSearchRequests,
    ...(usage.cacheWrite1h === undefined ? {} : { cacheWrite1h: usage.cacheWrite1h }),
    ...(usage.reportedCost === undefined ? {} : { reportedCost: usage.reportedCost }),
  };
  return storable(call)
    ? {
        ...(call.model === undefined ? {} : { model: call.model }),
        ...(call.provider === undefined ? {} : { provider: call.provider }),
        usage: counts,
      }
    : { usage: counts };
}

/** Whether a call's model and provider can be stored, checked once per pair. */
const checkedNames = new Map<string, boolean>();

/**
 * The gateway's check of the facts, made once per model and provider (the importers' counts
 * are whole numbers already): a name the store cannot hold (too long, not well-formed) is left
 * out rather than refusing the conversation.
 */
function storable(call: ImportedCall): boolean {
  const key = JSON.stringify([call.model ?? null, call.provider ?? null]);
  let ok = checkedNames.get(key);
  if (ok === undefined) {
    try {
      parseGatewayFacts(
        {
          ...(call.model === undefined ? {} : { model: call.model }),
          ...(call.provider === undefined ? {} : { provider: call.provider }),
        },
        "gateway",
      );
      ok = true;
    } catch (error) {
      if (!isVerbatimError(error)) throw error;
      ok = false;
    }
    checkedNames.set(key, ok);
  }
  return ok;
}

const NO_CALLER_METADATA = checkCallerMetadata(undefined, "metadata");

/**
 * The stored `metadata` text of a message with these facts, as `appendMessages` writes it;
 * null for a message without facts (the import's shared text).
 */
export function importedMetadataText(facts: GatewayFacts | undefined): string | null {
  return facts === undefined
    ? null
    : JSON.stringify({ caller: NO_CALLER_METADATA, gateway: facts });
}
