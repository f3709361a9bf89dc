export { CliAgentBackend } from "./cli-backend.js";
export type { CliAgentOptions, CliBilling, CliDialect, CliLogEntry } from "./cli-backend.js";
export { claudeCodeBackend, claudeCodeDialect } from "./claude-code.js";
export { codexBackend, codexDialect } from "./codex.js";
export { ClaudeStreamParser } from "./claude-stream.js";
export { CodexStreamParser } from "./codex-stream.js";
export type { AgentStreamEvent, AgentStreamParser, ItemIdFactory } from "./stream-events.js";
