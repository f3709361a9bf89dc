import { z } from "zod";
import type { GatewayMessage } from "../conversations/message-types.js";
import { requestCost } from "verbatim-llm/pricing";

/** A row of ai_gateway_messages as the console shows it (B3 column names). */
export const storedMessageSchema = z.object({
  id: z.string(),
  subject_uid: z.string(),
  conversation_id: z.string(),
  previous_message_id: z.string().nullable(),
  type: z.string(),
  role: z.string(),
  status: z.string(),
  content: z.array(z.record(z.string(), z.unknown())),
  metadata: z.object({
    caller: z.record(z.string(), z.string()),
    gateway: z.record(z.string(), z.unknown()),
  }),
  depth: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
  cost: z
    .union([
      z.object({ kind: z.enum(["reported", "estimated"]), dollars: z.number() }),
      z.object({ kind: z.literal("unknown") }),
    ])
    .optional()
    .describe(
      "A model call's cost in US dollars (messages with usage): reported by the provider, estimated from the price table at the time of the call, or unknown (docs/providers.md, pricing).",
    ),
});
export type StoredMessageReply = z.infer<typeof storedMessageSchema>;

/** The cost of the model call that wrote a message, when it has usage. */
function costOf(message: GatewayMessage): { cost?: StoredMessageReply["cost"] } {
  const { usage, model, provider } = message.metadata.gateway;
  if (usage === undefined) return {};
  if (usage.reportedCost !== undefined) {
    return { cost: { kind: "reported", dollars: usage.reportedCost } };
  }
  if (model === undefined || provider === undefined) return { cost: { kind: "unknown" } };
  const cost = requestCost({ provider, model, usage, at: new Date(message.createdAt) });
  return {
    cost:
      cost.kind === "reported" || cost.kind === "estimated"
        ? { kind: cost.kind, dollars: cost.dollars }
        : { kind: "unknown" },
  };
}

export function storedMessageReply(message: GatewayMessage): StoredMessageReply {
  return {
    id: message.id,
    subject_uid: message.subjectUid,
    conversation_id: message.conversationId,
    previous_message_id: message.previousMessageId,
    type: message.type,
    role: message.role,
    status: message.status,
    content: message.content.map((block) => ({ ...block })),
    metadata: {
      caller: { ...message.metadata.caller },
      gateway: { ...message.metadata.gateway },
    },
    depth: message.depth,
    created_at: message.createdAt,
    updated_at: message.updatedAt,
    ...costOf(message),
  };
}
