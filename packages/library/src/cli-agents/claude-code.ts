import { CliAgentBackend, type CliAgentOptions, type CliDialect } from "./cli-backend.js";
import { ClaudeStreamParser } from "./claude-stream.js";

/**
 * Claude Code, run as `claude -p --output-format stream-json --verbose [--model M]
 * [--resume SESSION]` with the message on standard input (docs/cli-agents.md).
 */
export const claudeCodeDialect: CliDialect = {
  provider: "claude-code",
  name: "Claude Code",
  defaultCommand: "claude",
  installHint: "Install it (npm install -g @anthropic-ai/claude-code) and sign in with `claude`",
  args(options, session) {
    return [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      ...(options.model === undefined ? [] : ["--model", options.model]),
      ...(options.extraArgs ?? []),
      ...(session === undefined ? [] : ["--resume", session]),
    ];
  },
  newParser: (newId) => new ClaudeStreamParser(newId),
  // Claude Code prefers ANTHROPIC_API_KEY over the signed-in subscription.
  subscriptionFromEnvironment: (env) => (env["ANTHROPIC_API_KEY"] ?? "") === "",
};

/** A conversation backend that runs each turn through Claude Code (A25). */
export function claudeCodeBackend(options: CliAgentOptions = {}): CliAgentBackend {
  return new CliAgentBackend(claudeCodeDialect, options);
}
