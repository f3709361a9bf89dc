/** The backend the terminal agent runs on: the provider layer, or an agent CLI. */
import { claudeCodeBackend, codexBackend } from "../../packages/library/src/cli-agents/index.js";
import { providerBackend, type Backend } from "../../packages/library/src/conversation/index.js";
import { PROVIDER_IDS, type ProviderId } from "../../packages/library/src/providers/index.js";

const DEFAULT_MODELS: Readonly<Record<ProviderId, string>> = {
  anthropic: "claude-sonnet-4-5",
  "openai-chat": "gpt-4o",
  "openai-responses": "gpt-4o",
  gemini: "gemini-2.5-flash",
  openrouter: "anthropic/claude-sonnet-4.5",
};

export function chooseBackend(name: string, env: NodeJS.ProcessEnv, root: string): Backend {
  switch (name) {
    case "claude-code":
      return claudeCodeBackend({
        cwd: root,
        env,
        ...(env["VERBATIM_MODEL"] === undefined ? {} : { model: env["VERBATIM_MODEL"] }),
      });
    case "codex":
      return codexBackend({
        cwd: root,
        env,
        ...(env["VERBATIM_MODEL"] === undefined ? {} : { model: env["VERBATIM_MODEL"] }),
      });
    case "provider": {
      const provider = env["VERBATIM_PROVIDER"] ?? "anthropic";
      if (!(PROVIDER_IDS as readonly string[]).includes(provider)) {
        throw new Error(`VERBATIM_PROVIDER must be one of ${PROVIDER_IDS.join(", ")}`);
      }
      const id = provider as ProviderId;
      return providerBackend({
        provider: id,
        model: env["VERBATIM_MODEL"] ?? DEFAULT_MODELS[id],
        transport: { env },
      });
    }
    default:
      throw new Error(`--backend must be provider, claude-code or codex, not ${name}`);
  }
}
