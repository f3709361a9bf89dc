export type {
  Backend,
  CliBackend,
  CliCost,
  CliTurnInput,
  CliTurnResult,
  ProviderBackend,
  RoundEvent,
  RoundRequest,
  RoundResult,
} from "./backend.js";
export { CLI_TRANSCRIPT_LIMIT, restoredSessionMessage } from "./backend.js";
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
  ToolDefinition,
  ToolImage,
  ToolOutput,
  ToolRunContext,
} from "./tools.js";
export { toolDefinition } from "./tools.js";
export { transcriptText } from "./transcript.js";
