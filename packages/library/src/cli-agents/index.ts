export { CliAgentBackend } from "./cli-backend.js";
export type { CliAgentOptions, CliBilling, CliDialect, CliLogEntry } from "./cli-backend.js";
export { claudeCodeBackend } from "./claude-code.js";
export { codexBackend } from "./codex.js";
export type { AgentStreamEvent, AgentStreamParser, ItemIdFactory } from "./stream-events.js";
