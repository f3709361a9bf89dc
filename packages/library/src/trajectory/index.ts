export {
  BUILT_IN_TOOL_NAMES,
  TRAJECTORY_ITEM_TYPES,
  agentMessageItemSchema,
  commandExecutionItemSchema,
  errorItemSchema,
  executionMechanismSchema,
  fileChangeItemSchema,
  noticeItemSchema,
  planItemSchema,
  reasoningItemSchema,
  systemMessageItemSchema,
  toolCallItemSchema,
  toolResultItemSchema,
  trajectoryItemSchema,
  userMessageItemSchema,
  webSearchItemSchema,
} from "./items.js";
export type {
  AgentMessageItem,
  CommandExecutionItem,
  ErrorItem,
  ExecutionMechanism,
  FileChangeItem,
  NoticeItem,
  PlanItem,
  ReasoningItem,
  SystemMessageItem,
  ToolCallItem,
  ToolResultItem,
  TrajectoryItem,
  TrajectoryItemType,
  UserMessageItem,
  WebSearchItem,
} from "./items.js";
export {
  CLIENT_ITEM_KEY_PREFIX,
  ITEM_KEY_MAX_LENGTH,
  isClientItemKey,
  itemKeySchema,
  storedTurnItemSchema,
} from "./row.js";
export type { StoredTurnItem } from "./row.js";
export { MODEL_USAGE_COUNTS, modelUsageSchema, sumUsage, usageOf } from "./usage.js";
export type { ModelUsage } from "./usage.js";
export { createSanitizer, defaultSanitizer, defaultSecretRules } from "./sanitizer.js";
export type { SanitizeResult, Sanitizer, SanitizerOptions, SecretRule } from "./sanitizer.js";
export type {
  ChatMLTrajectory,
  ChatMLTurnSpan,
  ModelVisibleTrajectory,
  ProjectedMessages,
  TrajectoryMetadata,
} from "./trajectory.js";
export { projectItemsToChatML, projectTrajectoryToChatML } from "./chatml-projection.js";
export type { TrajectoryProjectionOptions } from "./chatml-projection.js";
export { projectGatewayMessage, projectGatewayMessagesToChatML } from "./gateway-projection.js";
export type { GatewayProjectionOptions } from "./gateway-projection.js";
export { modelVisibleJson, modelVisibleTrajectory } from "./model-visible.js";
export { fitPageToLimit, pageByteLength } from "./paging.js";
export type { PageLimitOptions } from "./paging.js";
export { parseStoredRowsJsonl } from "./jsonl.js";
export type { ParsedRows, RowLineProblem } from "./jsonl.js";
