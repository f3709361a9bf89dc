// The gateway layer's error codes, registered in verbatim-llm/core when this entry point loads.
import "./error-codes.js";
export { compressContext } from "./conversations/compression.js";
export type { CompressInput } from "./conversations/compression.js";
export { GatewayMessageStore } from "./conversations/message-store.js";
export type {
  AppendInput,
  AppendMessageInput,
  FinishInput,
  GatewayMessageStoreOptions,
  MessageContext,
} from "./conversations/message-store.js";
export { FINAL_STATUSES } from "./conversations/message-types.js";
export type {
  CallerMetadata,
  CompressionFacts,
  FinalStatus,
  GatewayConversation,
  GatewayFacts,
  RequestSettings,
  GatewayMessage,
  GatewayMessageMetadata,
  GatewayMessageStatus,
  GatewayMessageType,
} from "./conversations/message-types.js";
export { gatewayFactsFromRound } from "./conversations/round-facts.js";
export type { Summarizer, SummaryRequest, SummaryResult } from "./conversations/summarizer.js";
export {
  CALLER_METADATA_MAX_KEYS,
  CALLER_METADATA_MAX_KEY_LENGTH,
  CALLER_METADATA_MAX_VALUE_LENGTH,
  DEFAULT_GATEWAY_LIMITS,
} from "./validation/checks.js";
export type { GatewayLimits } from "./validation/checks.js";
export { BackgroundAgentJobs, MAX_RETRY_BUDGET } from "./jobs/job-service.js";
export type { BackgroundAgentJobsOptions } from "./jobs/job-service.js";
export { MAX_ITEMS_PER_APPEND, MAX_ITEM_BYTES } from "./jobs/job-items.js";
export { JOB_END_STATUSES } from "./jobs/job-types.js";
export type {
  BackgroundAgentJob,
  JobStatus,
  JobTurn,
  StoredJobTrajectory,
  TurnItemInput,
  TurnStatus,
  WakeEvent,
  WakePayload,
} from "./jobs/job-types.js";
