export { decodeConversation, decodeConversationOrThrow } from "./decode.js";
export type { DecodeResult, FieldProblem, UnreadableReason } from "./decode.js";
export { createHistoryEncodingCache, encodeConversation } from "./encode.js";
export type { HistoryEncodingCache } from "./encode.js";
export { FORMAT_CHANGELOG, FORMAT_VERSION, conversationSchema } from "./conversation-schema.js";
export type {
  ApprovalCard,
  Feedback,
  LintRuleCard,
  PendingMessage,
  SavedConversation,
  SentFact,
  SkillCard,
} from "./conversation-schema.js";
export { ITEM_TYPES, itemSchema } from "./items.js";
export type { Citation, Item, ItemOfType, ItemType } from "./items.js";
export { emptyConversation, isEmptyConversation } from "./empty.js";
export { formatJsonSchema } from "./json-schema.js";
