import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import type { Block } from "verbatim-llm/history";
import type { PreparedMessage } from "./append.js";
import type {
  CallerMetadata,
  GatewayFacts,
  GatewayMessageStatus,
  RequestSettings,
} from "./message-types.js";
import {
  appendMessageSchema,
  serializeContent,
  serializeRequestSettings,
} from "../validation/content.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import {
  idSchema,
  idempotencyKeySchema,
  parseOrThrow,
  subjectSchema,
  type GatewayLimits,
} from "../validation/checks.js";
import { parseGatewayFacts } from "../validation/gateway-facts.js";

/** One message to append (validated: see docs/store.md). */
export interface AppendMessageInput {
  readonly role: "user" | "assistant" | "tool";
  /** Defaults from the role: user, assistant, tool_result. */
  readonly type?: "user" | "assistant" | "tool_result";
  readonly content: readonly Block[];
  /** Default `completed`; `in_progress` only for the last message of a write. */
  readonly status?: GatewayMessageStatus;
  /** The caller's string pairs (B5). */
  readonly metadata?: CallerMetadata;
  /** Facts the gateway owns (model, provider, usage, provider response id). */
  readonly gateway?: GatewayFacts;
  /** A response message's request settings, given back by `getRequestSettings`. */
  readonly request?: RequestSettings;
  /**
   * An in_progress message's lease: it is held this long from the write, renewed with
   * `renewLeases`; once past, `endAbandoned` ends it `incomplete` (docs/server/responses.md).
   */
  readonly leaseMilliseconds?: number;
  /**
   * Who renews that lease: the server's id (gateway/responses/leases.ts), which renews every
   * lease it holds in one statement. Without it nobody renews it: it runs out after
   * `leaseMilliseconds`.
   */
  readonly leaseHolder?: string;
}

export interface AppendInput {
  /** The anchor this write continues, or null to start a chain. */
  readonly previousMessageId: string | null;
  /** Needed to start a new chain in an existing conversation; checked against the anchor. */
  readonly conversationId?: string;
  readonly messages: readonly AppendMessageInput[];
  /** Metadata of the conversation a write without anchor and conversation creates. */
  readonly conversationMetadata?: CallerMetadata;
  readonly idempotencyKey?: string;
}

/** A message to append and its lease, apart (the lease is not stored with the message). */
function withoutLease(raw: unknown): {
  leaseMilliseconds: unknown;
  leaseHolder: unknown;
  fields: unknown;
} {
  if (
    typeof raw !== "object" ||
    raw === null ||
    !("leaseMilliseconds" in raw || "leaseHolder" in raw)
  ) {
    return { leaseMilliseconds: undefined, leaseHolder: undefined, fields: raw };
  }
  const { leaseMilliseconds, leaseHolder, ...fields } = raw as Record<string, unknown>;
  return { leaseMilliseconds, leaseHolder, fields };
}

/** An in_progress message's lease: how long from the write, and who renews it. */
export interface PreparedLease {
  readonly milliseconds: number;
  readonly holder: string | undefined;
}

/** An append checked by `prepareAppend`, ready for `appendPrepared`. */
export interface PreparedAppend {
  readonly subjectUid: string;
  readonly request: z.output<typeof appendInputSchema>;
  readonly messages: readonly PreparedMessage[];
  /** Each message's lease, when it has one. */
  readonly leases: readonly (PreparedLease | undefined)[];
  readonly conversationMetadata: CallerMetadata;
}

const appendInputSchema = z.strictObject({
  previousMessageId: idSchema.nullable(),
  conversationId: idSchema.optional(),
  messages: z.array(z.unknown()).min(1, "expected at least one message"),
  conversationMetadata: z.unknown().optional(),
  idempotencyKey: idempotencyKeySchema.optional(),
});

/**
 * Every check of an append that needs no database (the subject, each message's content,
 * metadata, gateway facts, request settings and lease, the limits), with the JSON text ready to
 * write. A write refused here refuses before anything else is done: a caller that also calls a
 * model checks the write first, so a refused request never reaches the model.
 */
export function prepareAppend(
  subjectUid: string,
  input: AppendInput,
  limits: GatewayLimits,
): PreparedAppend {
  const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
  const request = parseOrThrow(appendInputSchema, input, "");
  if (request.messages.length > limits.maxMessagesPerWrite) {
    throw new VerbatimError(
      "gateway_content_too_large",
      `a write appends at most ${limits.maxMessagesPerWrite} messages, got ${request.messages.length}`,
      { where: "messages", hint: "Split the write; nothing was written" },
    );
  }
  const leases: (PreparedLease | undefined)[] = [];
  const messages = request.messages.map((raw, index) => {
    const where = `messages[${index}]`;
    const { leaseMilliseconds, leaseHolder, fields } = withoutLease(raw);
    const message = parseOrThrow(appendMessageSchema, fields, where);
    if (message.status === "in_progress" && index !== request.messages.length - 1) {
      throw new VerbatimError(
        "gateway_input_invalid",
        "only the last message of a write can be in_progress",
        { where: `${where}.status`, hint: "Append the messages after it once it is finished" },
      );
    }
    if (leaseMilliseconds !== undefined) {
      if (
        message.status !== "in_progress" ||
        typeof leaseMilliseconds !== "number" ||
        !Number.isInteger(leaseMilliseconds) ||
        leaseMilliseconds < 1
      ) {
        throw new VerbatimError(
          "gateway_input_invalid",
          "a lease is a positive whole number of milliseconds, on an in_progress message only",
          { where: `${where}.leaseMilliseconds`, hint: "Lease the in_progress message only" },
        );
      }
    }
    if (
      leaseHolder !== undefined &&
      (leaseMilliseconds === undefined || typeof leaseHolder !== "string" || leaseHolder === "")
    ) {
      throw new VerbatimError("gateway_input_invalid", "a lease holder is a server's id", {
        where: `${where}.leaseHolder`,
        hint: "Name the holder of a lease only, with leaseMilliseconds",
      });
    }
    leases.push(
      leaseMilliseconds === undefined
        ? undefined
        : { milliseconds: leaseMilliseconds, holder: leaseHolder },
    );
    const metadataValue = {
      caller: checkCallerMetadata(message.metadata, `${where}.metadata`),
      gateway: parseGatewayFacts(message.gateway, `${where}.gateway`),
    };
    const prepared: PreparedMessage = {
      type: message.type,
      role: message.role,
      status: message.status ?? "completed",
      content: serializeContent(message.content, message.role, limits, `${where}.content`),
      blocks: message.content,
      metadata: JSON.stringify(metadataValue),
      metadataValue,
      startsContext: false,
      request:
        message.request === undefined
          ? null
          : serializeRequestSettings(message.request, limits, `${where}.request`),
    };
    return prepared;
  });
  const conversationMetadata = checkCallerMetadata(
    request.conversationMetadata,
    "conversationMetadata",
  );
  return { subjectUid: subject, request, messages, leases, conversationMetadata };
}
