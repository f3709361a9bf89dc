import type { Cost, SentFact, Usage } from "../format/conversation-schema.js";
import { toolCallArgumentText, toolResultText } from "../history/blocks.js";
import type { Message, TextBlock } from "../history/message.js";
import type { Backend, ProviderBackend } from "./backend.js";
import type { CompactionPreview, CompactionResult } from "./api.js";
import { totalInput } from "../pricing/cost.js";
import type { PriceBook } from "./prices.js";
import type { ConversationState } from "./state.js";
import type { ToolDefinition } from "../providers/types.js";
import { toolDefinition } from "./tools.js";
import type { TurnControl, TurnHost } from "./turn-host.js";

/** The first line of the message that replaces compacted turns (A20). */
export const COMPACTED_HEADING = "# Conversation so far";

export const COMPACTION_INSTRUCTION =
  "Summarise the conversation above for your own later use: the user's goals, what was decided " +
  "and done, the state of the work, open questions, and anything you must remember to continue. " +
  "Write plain text. Do not call tools.";

/** History text characters: text blocks, tool arguments and tool results. */
export function historyCharacters(history: readonly Message[]): number {
  let characters = 0;
  for (const message of history) {
    for (const block of message.content) {
      if (block.type === "text") characters += block.text.length;
      else if (block.type === "toolCall") characters += toolCallArgumentText(block).length;
      else if (block.type === "toolResult") characters += toolResultText(block).length;
    }
  }
  return characters;
}

export interface PreviewInput {
  readonly history: readonly Message[];
  readonly sentFacts: readonly SentFact[];
  readonly lastRoundUsage: Usage | undefined;
  readonly provider: string;
  readonly model: string;
  readonly running: boolean;
  readonly backendKind: Backend["kind"];
  readonly prices: PriceBook;
}

/**
 * What compaction would send and cost (A19), and whether it is offered (A22). Pure: the CLI
 * previews saved packages with it.
 */
export function previewCompaction(input: PreviewInput): CompactionPreview {
  const inputTokens =
    input.lastRoundUsage === undefined
      ? Math.ceil(historyCharacters(input.history) / 4)
      : totalInput(input.lastRoundUsage);
  let estimatedCost: Cost;
  if (input.backendKind === "cli" || !input.prices.billsPerToken(input.provider)) {
    estimatedCost = { kind: "notBilled" };
  } else {
    const usage = {
      input: inputTokens,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      webSearchRequests: 0,
    };
    const dollars = input.prices.requestCost(input.provider, input.model, usage);
    estimatedCost = dollars === undefined ? { kind: "unknown" } : { kind: "estimated", dollars };
  }
  const base = { inputTokens, estimatedCost };
  if (input.running) return { available: false, reason: "turnRunning", ...base };
  if (input.backendKind === "cli") return { available: false, reason: "cliBackend", ...base };
  if (input.sentFacts.length <= 2) return { available: false, reason: "tooFewTurns", ...base };
  return { available: true, ...base };
}

/** What compaction needs of the live conversation: the turn loop's host. */
export type CompactionHost = TurnHost;

/**
 * One model call summarises every turn but the last two (A20). On success the history becomes
 * the summary message and the last two turns unchanged; `sentFacts` keeps their start positions
 * without sections; the panel gains one notice. A failed call or an empty summary changes
 * nothing but adds a failure item (A21).
 */
export async function runCompaction(
  host: CompactionHost,
  backend: ProviderBackend,
  control: TurnControl,
): Promise<CompactionResult> {
  const state: ConversationState = host.state;
  const facts = state.sentFacts;
  const keepFrom = facts[facts.length - 2];
  if (facts.length <= 2 || keepFrom === undefined) {
    return { ok: false, reason: "Two turns or fewer: there is nothing to compact." };
  }
  const cut = keepFrom.message;
  const request: Message[] = [
    ...state.history.slice(0, cut),
    { role: "user", content: [{ type: "text", text: COMPACTION_INSTRUCTION }] },
  ];
  let summary: string;
  try {
    const result = await backend.round({
      system: host.system,
      history: request,
      turnStart: request.length,
      images: (sha256) => host.imageStore.get(sha256),
      tools: compactionTools(host, request),
      signal: control.controller.signal,
      onEvent: () => undefined,
    });
    if (!control.alive()) return { ok: false, reason: "The conversation was replaced." };
    host.recordCompactionRound(backend.provider, backend.model, result.usage);
    summary = result.message.content
      .filter((block): block is TextBlock => block.type === "text")
      .map((block) => block.text)
      .join("")
      .trim();
  } catch (error) {
    const reason = `Compaction failed: ${error instanceof Error ? error.message : String(error)}`;
    if (control.alive()) fail(host, reason);
    return { ok: false, reason };
  }
  if (summary === "") {
    const reason = "Compaction failed: the model returned an empty summary. Nothing was changed.";
    fail(host, reason);
    return { ok: false, reason };
  }
  const summaryMessage: Message = {
    role: "user",
    content: [{ type: "text", text: `${COMPACTED_HEADING}\n${summary}` }],
  };
  state.history = [summaryMessage, ...state.history.slice(cut)];
  state.sentFacts = facts.slice(-2).map((fact) => ({ message: fact.message - cut + 1 }));
  state.items.push({
    id: host.newId(),
    type: "notice",
    kind: "compacted",
    text: "The conversation was compacted: every turn but the last two was replaced by a summary.",
  });
  host.change("compaction");
  host.update();
  return { ok: true, summary };
}

/**
 * The tools the compaction call declares: the host's, plus a stub for every other tool the
 * history calls (providers refuse tool calls in a request that declares no such tool).
 */
function compactionTools(host: TurnHost, history: readonly Message[]): ToolDefinition[] {
  const tools = host.tools.map(toolDefinition);
  const known = new Set(tools.map((tool) => tool.name));
  for (const message of history) {
    for (const block of message.content) {
      if (block.type !== "toolCall" || known.has(block.name)) continue;
      known.add(block.name);
      tools.push({
        name: block.name,
        description: "A tool used earlier in this conversation.",
        inputSchema: { type: "object" },
      });
    }
  }
  return tools;
}

function fail(host: TurnHost, message: string): void {
  host.state.items.push({ id: host.newId(), type: "failure", message });
  host.update();
}
