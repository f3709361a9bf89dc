export { trajectoryItemSchema } from "./items.js";
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
export { storedTurnItemSchema } from "./row.js";
export type { StoredTurnItem } from "./row.js";
export type { ModelUsage } from "./usage.js";
export { createSanitizer, defaultSanitizer } from "./sanitizer.js";
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
export { projectGatewayMessagesToChatML } from "./gateway-projection.js";
export type { GatewayProjectionOptions } from "./gateway-projection.js";
export { modelVisibleJson, modelVisibleTrajectory } from "./model-visible.js";
export { fitPageToLimit } from "./paging.js";
export type { PageLimitOptions } from "./paging.js";
export { parseStoredRowsJsonl } from "./jsonl.js";
export type { ParsedRows, RowLineProblem } from "./jsonl.js";
