import type { Block, Role } from "verbatim-llm/history";
import type { Usage } from "verbatim-llm/pricing";

/**
 * What a stored gateway message is (SPEC B3 `type`): a caller's message, the model's answer, a
 * tool's result, or a compression summary that starts a new model-visible context (B6).
 */
export type GatewayMessageType = "user" | "assistant" | "tool_result" | "summary";

/** The role each type has in the transcript. */
export const ROLE_OF_TYPE: Readonly<Record<GatewayMessageType, Role>> = {
  user: "user",
  assistant: "assistant",
  tool_result: "tool",
  summary: "user",
};

/** The type a message appended with a role gets when none is named. */
export const TYPE_OF_ROLE: Readonly<Record<Role, Exclude<GatewayMessageType, "summary">>> = {
  user: "user",
  assistant: "assistant",
  tool: "tool_result",
};

/** Lifecycle: written `in_progress` when it starts, then one final status, never changed again. */
export type GatewayMessageStatus =
  "in_progress" | "completed" | "failed" | "incomplete" | "cancelled";

export const FINAL_STATUSES = ["completed", "failed", "incomplete", "cancelled"] as const;
export type FinalStatus = (typeof FINAL_STATUSES)[number];

/** The caller's opaque metadata: a few string pairs (never a list of items, B5). */
export type CallerMetadata = Readonly<Record<string, string>>;

/** How a summary came to be (gateway facts of a `summary` message). */
export interface CompressionFacts {
  /** The anchor whose context the summary replaces. */
  readonly throughMessageId: string;
  /** The first message of the replaced context (the chain's start or an earlier summary). */
  readonly fromMessageId: string;
  /** How many messages the summary replaces. */
  readonly messageCount: number;
  /** `caller`: the caller wrote the summary; `model`: a model call wrote it. */
  readonly source: "caller" | "model";
}

/**
 * The model calls of an imported conversation that end no message of its history (the source
 * compacted or condensed their answers away, or never kept them), on the history's first
 * message: how many, their usage summed, and their cost priced one call at a time.
 */
export interface CallsOutsideHistoryFacts {
  readonly calls: number;
  /** Their tokens summed (no `reportedCost`: the cost is below). */
  readonly usage: Usage;
  /** The dollars of the calls whose cost is known (reported by the source, or estimated). */
  readonly dollars: number;
  /** How many calls' cost the source reported, was estimated from prices, or is unknown. */
  readonly reported: number;
  readonly estimated: number;
  readonly unknown: number;
}

/**
 * Facts the gateway owns about a message (B3): which model and provider answered, the usage,
 * the provider's own response id, why it failed. Scalars and small objects only: never the
 * provider's raw body and never a list of items (B5).
 */
/**
 * The settings of the request that produced a response message, kept so that reading the
 * response gives them back: its instructions, its tool definitions (JSON objects as the caller
 * sent them) and its largest output. Stored apart from metadata (B5), in
 * `ai_gateway_messages.request`.
 */
export interface RequestSettings {
  readonly instructions: string | null;
  readonly tools: readonly Readonly<Record<string, unknown>>[];
  readonly maxOutputTokens: number | null;
  /**
   * The other settings a response object echoes (temperature, top_p, text, tool_choice,
   * reasoning, store, …), as the caller sent them.
   */
  readonly echo?: Readonly<Record<string, unknown>> | undefined;
}

export interface GatewayFacts {
  readonly model?: string;
  readonly provider?: string;
  readonly providerResponseId?: string;
  readonly usage?: Usage;
  readonly stopReason?: string;
  readonly error?: { readonly code: string; readonly message: string };
  readonly compression?: CompressionFacts;
  /**
   * A `system` or `developer` message of a Responses request, stored as a user message: the
   * model gets it through the provider's system slot (docs/server/responses.md, "Conformance").
   */
  readonly inputRole?: "system" | "developer";
  /**
   * Images a recorded call named by URL (not fetched: the recorded path passes requests
   * through), by the index of their `imageOmitted` block in the content.
   */
  readonly imageUrls?: Readonly<Record<string, string>>;
  /**
   * The recorded pass-through call this answer came from (GET /ai-gateway/recorded-calls/:id
   * gives its facts and exact bytes).
   */
  readonly recordedCallId?: string;
  /** An imported history's first message: the source's calls outside the history. */
  readonly callsOutsideHistory?: CallsOutsideHistoryFacts;
}

export interface GatewayMessageMetadata {
  readonly caller: CallerMetadata;
  readonly gateway: GatewayFacts;
}

/** One stored message as the gateway returns it. */
export interface GatewayMessage {
  readonly id: string;
  readonly subjectUid: string;
  readonly conversationId: string;
  /** The message before it in its chain (`previous_response_id` in the API); null at a start. */
  readonly previousMessageId: string | null;
  readonly type: GatewayMessageType;
  readonly role: Role;
  readonly status: GatewayMessageStatus;
  readonly content: readonly Block[];
  readonly metadata: GatewayMessageMetadata;
  /** Position in its chain: 0 at the chain's start. */
  readonly depth: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface GatewayConversation {
  readonly id: string;
  readonly subjectUid: string;
  readonly metadata: CallerMetadata;
  readonly createdAt: string;
}
