import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import { isWellFormedText, repairStoredText } from "verbatim-llm/internal";
import type { Block, Message } from "verbatim-llm/history";
import type {
  CallerMetadata,
  CompressionFacts,
  GatewayFacts,
  GatewayMessage,
} from "./message-types.js";
import type { GatewayMessageStore } from "./message-store.js";
import type { Summarizer, SummaryResult } from "./summarizer.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import {
  idSchema,
  idempotencyKeySchema,
  parseOrThrow,
  subjectSchema,
} from "../validation/checks.js";
import { parseGatewayFacts } from "../validation/gateway-facts.js";
import { serializeContent } from "../validation/content.js";

export interface CompressInput {
  /** The anchor X whose context the summary replaces. */
  readonly anchorId: string;
  /** The summary text, when the caller wrote it; else `summarizer` writes it. */
  readonly summary?: string;
  readonly summarizer?: Summarizer;
  readonly metadata?: CallerMetadata;
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

const compressInputSchema = z.strictObject({
  anchorId: idSchema,
  summary: z
    .string()
    .min(1, "a summary is not empty")
    .refine(isWellFormedText, "the summary holds a lone surrogate (not valid Unicode)")
    .optional(),
  summarizer: z
    .custom<Summarizer>(
      (value) =>
        typeof value === "object" &&
        value !== null &&
        typeof (value as { summarize?: unknown }).summarize === "function",
      "expected a Summarizer (an object with summarize())",
    )
    .optional(),
  metadata: z.unknown().optional(),
  idempotencyKey: idempotencyKeySchema.optional(),
  signal: z.instanceof(AbortSignal).optional(),
});

/**
 * Compresses the context of anchor X (B6, B13): appends a summary message S whose
 * `previous_message_id` is X and returns it. S's id works as `previous_response_id`; the
 * context of S, and of everything that continues it, starts at S. X's own context does not
 * change and the replaced messages stay stored (for audit) outside S's context. The summary is
 * the caller's, or a model call's through `summarizer`, which gets X's context: from the last
 * summary on when the chain was compressed before.
 */
export async function compressContext(
  store: GatewayMessageStore,
  subjectUid: string,
  input: CompressInput,
): Promise<GatewayMessage> {
  const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
  const request = parseOrThrow(compressInputSchema, input, "");
  if ((request.summary === undefined) === (request.summarizer === undefined)) {
    throw new VerbatimError(
      "gateway_input_invalid",
      "pass exactly one of summary (the text) and summarizer (a model writes it)",
      { where: "summary", hint: "Nothing was written" },
    );
  }
  const metadata = checkCallerMetadata(request.metadata, "metadata");
  const context = await store.readContext(subject, request.anchorId);
  const first = context.messages[0] ?? context.anchor;
  if (context.anchor.status === "in_progress") {
    throw new VerbatimError(
      "gateway_anchor_in_progress",
      `message ${context.anchor.id} is still in progress and cannot be compressed yet`,
      { where: "anchorId", hint: "Compress it once it has a final status" },
    );
  }
  const written =
    request.summary !== undefined
      ? { text: request.summary }
      : await summarize(request.summarizer, context.messages, request.signal);
  const compression: CompressionFacts = {
    throughMessageId: context.anchor.id,
    fromMessageId: first.id,
    messageCount: context.messages.length,
    source: request.summary !== undefined ? "caller" : "model",
  };
  const facts: GatewayFacts = {
    ...parseGatewayFacts(
      {
        model: written.model,
        provider: written.provider,
        providerResponseId: written.providerResponseId,
        usage: written.usage,
      },
      "summarizer result",
    ),
    compression,
  };
  const blocks: Block[] = [{ type: "text", text: written.text }];
  const content = serializeContent(blocks, "user", store.limits, "summary");
  const [summary] = await store.runAppend(
    {
      subjectUid: subject,
      conversationId: context.anchor.conversationId,
      previousMessageId: context.anchor.id,
      messages: [
        {
          type: "summary",
          role: "user",
          status: "completed",
          content,
          blocks,
          metadata: JSON.stringify({ caller: metadata, gateway: facts }),
          metadataValue: { caller: metadata, gateway: facts },
          startsContext: true,
          request: null,
        },
      ],
      conversationMetadata: {},
      now: store.now(),
    },
    request.idempotencyKey,
    "compress",
    { anchorId: request.anchorId, summary: request.summary ?? null, metadata },
  );
  if (summary === undefined) throw new Error("compression stored no summary");
  return summary;
}

async function summarize(
  summarizer: Summarizer | undefined,
  messages: readonly GatewayMessage[],
  signal: AbortSignal | undefined,
): Promise<SummaryResult> {
  if (summarizer === undefined) throw new Error("no summarizer");
  const history: Message[] = messages.map((message) => ({
    role: message.role,
    content: message.content,
  }));
  let result: SummaryResult;
  try {
    result = await summarizer.summarize({
      messages: history,
      startsWithSummary: messages[0]?.type === "summary",
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    throw new VerbatimError(
      "gateway_summary_failed",
      `the model call for the summary failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        where: "summarizer",
        hint: "Nothing was written; retry, or pass the summary",
        cause: error,
      },
    );
  }
  if (typeof result.text !== "string" || result.text.trim() === "") {
    throw new VerbatimError("gateway_summary_failed", "the model returned no summary text", {
      where: "summarizer",
      hint: "Nothing was written; retry, or pass the summary",
    });
  }
  // What a model wrote is repaired, not refused (src/core/stored-text.ts): a lone surrogate or
  // a NUL becomes U+FFFD, so a summary is never lost to the stored-text rule.
  // (A fact of another type is left to parseGatewayFacts, which refuses it.)
  const repaired = <T>(value: T): T =>
    (typeof value === "string" ? repairStoredText(value) : value) as T;
  return {
    ...result,
    text: repairStoredText(result.text),
    ...(result.model === undefined ? {} : { model: repaired(result.model) }),
    ...(result.provider === undefined ? {} : { provider: repaired(result.provider) }),
    ...(result.providerResponseId === undefined
      ? {}
      : { providerResponseId: repaired(result.providerResponseId) }),
  };
}
