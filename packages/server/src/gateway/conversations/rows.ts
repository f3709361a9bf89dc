import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import type { Block, Role } from "verbatim-llm/history";
import { blockSchema, isBlockList } from "verbatim-llm/internal";
import type { ConversationRow } from "../../store/repositories/gateway-conversations.js";
import {
  EMPTY_METADATA_JSON,
  MESSAGE_STATUS_VALUES,
  MESSAGE_TYPE_VALUES,
  type ChainRow,
  type MessageRow,
} from "../../store/repositories/gateway-messages.js";
import {
  ROLE_OF_TYPE,
  type CallerMetadata,
  type GatewayConversation,
  type GatewayFacts,
  type GatewayMessage,
  type GatewayMessageMetadata,
  type RequestSettings,
  type GatewayMessageStatus,
  type GatewayMessageType,
} from "./message-types.js";
import { requestSettingsSchema } from "../validation/content.js";
import { storedGatewayFactsSchema } from "../validation/gateway-facts.js";

/**
 * Rows to gateway values. Rows are validated on the way out as well (zod), so a row changed
 * behind the store's back is reported, not passed on.
 */
const contentSchema = z.array(blockSchema);
const storedMetadataSchema = z.strictObject({
  caller: z.record(z.string(), z.string()),
  gateway: storedGatewayFactsSchema,
});
const TYPES: ReadonlySet<string> = new Set<GatewayMessageType>(MESSAGE_TYPE_VALUES);
const STATUSES: ReadonlySet<string> = new Set<GatewayMessageStatus>(MESSAGE_STATUS_VALUES);

function corrupt(row: { id: string }, what: string, cause?: unknown): VerbatimError {
  return new VerbatimError("store_row_invalid", `stored message ${row.id} has an invalid ${what}`, {
    where: `ai_gateway_messages ${row.id}`,
    hint: "The row was changed outside verbatim; restore it from a backup",
    cause,
  });
}

function parseJson(row: { id: string }, column: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw corrupt(row, column, error);
  }
}

/** The metadata of most messages, one frozen object shared by all of them. */
const EMPTY_METADATA: { caller: CallerMetadata; gateway: GatewayFacts } = Object.freeze({
  caller: Object.freeze({}),
  gateway: Object.freeze({}),
});

export function parseStoredMetadata(
  row: { id: string },
  text: string,
): { caller: CallerMetadata; gateway: GatewayFacts } {
  // The most common stored value, read without parsing.
  if (text === EMPTY_METADATA_JSON) return EMPTY_METADATA;
  const metadata = storedMetadataSchema.safeParse(parseJson(row, "metadata", text));
  if (!metadata.success) throw corrupt(row, "metadata", metadata.error);
  return metadata.data;
}

/**
 * Stored content: parsed, then checked by the fast structural check, and by the zod schema
 * only when that check is not sure (which explains the fault, or accepts).
 */
function parseStoredContent(row: { id: string }, text: string): Block[] {
  const value = parseJson(row, "content", text);
  if (isBlockList(value)) return value;
  const content = contentSchema.safeParse(value);
  if (!content.success) throw corrupt(row, "content", content.error);
  return content.data as Block[];
}

export function messageFromRow(row: MessageRow): GatewayMessage {
  if (TYPES.has(row.type) && row.role !== ROLE_OF_TYPE[row.type as GatewayMessageType]) {
    throw corrupt(row, "role");
  }
  return messageFromChainRow(row, row.subject_uid, row.conversation_id);
}

/**
 * A row of a chain read, whose subject and conversation are those of its anchor; the role
 * follows from the type (a chain read does not load it).
 */
export function messageFromChainRow(
  row: ChainRow,
  subjectUid: string,
  conversationId: string,
): GatewayMessage {
  if (!TYPES.has(row.type)) throw corrupt(row, "type");
  if (!STATUSES.has(row.status)) throw corrupt(row, "status");
  const type = row.type as GatewayMessageType;
  const role: Role = ROLE_OF_TYPE[type];
  return {
    id: row.id,
    subjectUid,
    conversationId,
    previousMessageId: row.previous_message_id,
    type,
    role,
    status: row.status as GatewayMessageStatus,
    content: parseStoredContent(row, row.content),
    metadata: parseStoredMetadata(row, row.metadata),
    depth: row.depth,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * A row this process has just written, from the values it was written from: the same message
 * a read returns, without parsing the JSON text back.
 */
export function messageFromWrittenRow(
  row: MessageRow,
  written: { readonly blocks: readonly Block[]; readonly metadataValue: GatewayMessageMetadata },
): GatewayMessage {
  return {
    id: row.id,
    subjectUid: row.subject_uid,
    conversationId: row.conversation_id,
    previousMessageId: row.previous_message_id,
    type: row.type as GatewayMessageType,
    role: row.role as Role,
    status: row.status as GatewayMessageStatus,
    content: written.blocks,
    metadata: written.metadataValue,
    depth: row.depth,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function conversationFromRow(row: ConversationRow): GatewayConversation {
  const metadata = z
    .record(z.string(), z.string())
    .safeParse(parseJson(row, "metadata", row.metadata));
  if (!metadata.success) throw corrupt(row, "metadata", metadata.error);
  return {
    id: row.id,
    subjectUid: row.subject_uid,
    metadata: metadata.data,
    createdAt: row.created_at,
  };
}

/** A row's request settings (null when it has none), checked like every stored value. */
export function requestSettingsFromRow(
  row: Pick<MessageRow, "id" | "request">,
): RequestSettings | null {
  if (row.request === null) return null;
  const settings = requestSettingsSchema.safeParse(parseJson(row, "request", row.request));
  if (!settings.success) throw corrupt(row, "request", settings.error);
  return settings.data;
}
