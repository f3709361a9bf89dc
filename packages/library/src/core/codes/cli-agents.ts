import { defineCodes } from "./define.js";

/** Error codes of src/cli-agents. Add a code here, then run `npm run docs:errors`. */
export const cliAgentsCodes = defineCodes([
  {
    code: "cli_agent_not_found",
    httpStatus: 503,
    meaning: "The agent CLI a backend runs (`claude` or `codex`) is not installed or not on PATH.",
    remedy:
      "Install the CLI and sign in (Claude Code: npm install -g @anthropic-ai/claude-code; Codex: npm install -g @openai/codex), or pass the path of the executable as `command`.",
  },
  {
    code: "cli_agent_start_failed",
    httpStatus: 503,
    meaning: "The agent CLI exists but could not be started (permissions, not an executable).",
    remedy: "Check that the path names the CLI's executable and that it may be run.",
  },
  {
    code: "cli_agent_exit",
    httpStatus: 502,
    meaning: "The agent CLI exited with a non-zero code or was killed by a signal.",
    remedy:
      "Read the CLI's standard error in the failure item (sign-in, rate limits, flags), fix it and send again.",
  },
  {
    code: "cli_agent_malformed_output",
    httpStatus: 502,
    meaning: "The agent CLI wrote a line on standard output that is not a JSON event.",
    remedy:
      "Check the CLI's version supports the streaming JSON output (docs/cli-agents.md) and that nothing else writes to its standard output.",
  },
  {
    code: "cli_agent_turn_failed",
    httpStatus: 502,
    meaning: "The agent CLI reported that the turn failed, or ended without finishing it.",
    remedy: "Read the reason in the failure item; the conversation stays usable, so send again.",
  },
]);
