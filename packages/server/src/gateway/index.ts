// The gateway layer's error codes, registered in verbatim-llm/core when this entry point loads.
import "./error-codes.js";
export { compressContext } from "./compression.js";
export type { CompressInput } from "./compression.js";
export { GatewayMessageStore } from "./message-store.js";
export type {
  AppendInput,
  AppendMessageInput,
  FinishInput,
  GatewayMessageStoreOptions,
  MessageContext,
} from "./message-store.js";
export { FINAL_STATUSES } from "./message-types.js";
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
} from "./message-types.js";
export { gatewayFactsFromRound } from "./round-facts.js";
export type { Summarizer, SummaryRequest, SummaryResult } from "./summarizer.js";
export {
  CALLER_METADATA_MAX_KEYS,
  CALLER_METADATA_MAX_KEY_LENGTH,
  CALLER_METADATA_MAX_VALUE_LENGTH,
  DEFAULT_GATEWAY_LIMITS,
} from "./validation.js";
export type { GatewayLimits } from "./validation.js";
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
