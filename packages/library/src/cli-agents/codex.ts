import { CliAgentBackend, type CliAgentOptions, type CliDialect } from "./cli-backend.js";
import { CodexStreamParser } from "./codex-stream.js";

/**
 * Codex CLI, run as `codex exec --json [--model M] -` for a new thread and
 * `codex exec --json [--model M] resume THREAD -` for a later turn, with the message on standard
 * input (`-`), see docs/cli-agents.md.
 */
export const codexDialect: CliDialect = {
  provider: "codex",
  name: "Codex",
  defaultCommand: "codex",
  installHint: "Install it (npm install -g @openai/codex) and sign in with `codex login`",
  args(options, session) {
    return [
      "exec",
      "--json",
      ...(options.model === undefined ? [] : ["--model", options.model]),
      ...(options.extraArgs ?? []),
      ...(session === undefined ? [] : ["resume", session]),
      "-",
    ];
  },
  newParser: (newId) => new CodexStreamParser(newId),
  // `codex exec` bills CODEX_API_KEY when it is set; otherwise the `codex login` account.
  subscriptionFromEnvironment: (env) => (env["CODEX_API_KEY"] ?? "") === "",
};

/** A conversation backend that runs each turn through Codex CLI (A25). */
export function codexBackend(options: CliAgentOptions = {}): CliAgentBackend {
  return new CliAgentBackend(codexDialect, options);
}
