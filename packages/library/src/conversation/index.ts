export type {
  Backend,
  CliBackend,
  CliCost,
  CliTurnInput,
  CliTurnResult,
  ProviderBackend,
  BackendRoundEvent,
  BackendRoundRequest,
  BackendRoundResult,
} from "./backend.js";
export { restoredSessionMessage } from "./backend.js";
export type {
  ChangeKind,
  CompactionPreview,
  CompactionResult,
  ContextSection,
  LiveConversation,
  LiveConversationOptions,
  NewConversationRequest,
  OutgoingMessage,
  SendResult,
} from "./api.js";
export type {
  GeneratedImage,
  HostTool,
  ToolCallInput,
  ToolImage,
  ToolOutput,
  ToolRunContext,
} from "./tools.js";
export { transcriptText } from "./transcript.js";
export { createLiveConversation } from "./live-conversation.js";
export type { CreateOptions } from "./live-conversation.js";
export { openLiveConversation } from "./open.js";
export type { OpenLiveConversationOptions, OpenedLiveConversation } from "./open.js";
export { providerBackend } from "./provider-backend.js";
export type { ProviderBackendOptions } from "./provider-backend.js";
export type { PriceBook } from "./prices.js";
export { unknownPrices } from "./prices.js";
export { defaultPriceBook } from "./default-prices.js";
export { previewCompaction } from "./compaction.js";
export type { PreviewInput } from "./compaction.js";
export { CONTEXT_NOTICE_THRESHOLD } from "./context-meter.js";
