import { z } from "zod";
import type { GatewayMessage } from "../../gateway/index.js";

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
});
export type StoredMessageReply = z.infer<typeof storedMessageSchema>;

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
  };
}
