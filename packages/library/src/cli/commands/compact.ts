import { openArchive } from "../../archive/index.js";
import { previewCompaction } from "../../conversation/compaction.js";
import type { CompactionPreview } from "../../conversation/api.js";
import { defaultPriceBook } from "../../conversation/default-prices.js";
import { openLiveConversation } from "../../conversation/open.js";
import { providerBackend } from "../../conversation/provider-backend.js";
import { VerbatimError } from "../../core/errors.js";
import { PROVIDER_IDS, isProviderId } from "../../providers/index.js";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  parseCommandArgs,
  usageError,
  type Command,
} from "../command.js";
import { requireFolder } from "../paths.js";

const CLI_PROVIDERS = new Set(["claude-code", "codex"]);

function describePreview(preview: CompactionPreview, provider: string, model: string): string {
  const cost = preview.estimatedCost;
  const price =
    cost.kind === "estimated" || cost.kind === "reported"
      ? `estimated cost $${cost.dollars.toFixed(4)}`
      : cost.kind === "notBilled"
        ? "not billed per token"
        : "cost unknown (no price for this model)";
  const head = preview.available
    ? "compaction available"
    : `compaction not available (${preview.reason ?? "unknown"})`;
  return `${head}: ${preview.inputTokens} input tokens to send, ${price} (${provider} ${model})\n`;
}

export const compact: Command = {
  words: ["compact"],
  usage: "<package> [--dry-run] [--json] [--provider <id>] [--model <name>]",
  summary: "Preview (--dry-run) or run the compaction of a package's saved conversation (A18–A22).",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      {
        "dry-run": { type: "boolean" },
        json: { type: "boolean" },
        provider: { type: "string" },
        model: { type: "string" },
      },
      { min: 1, max: 1 },
    );
    const folder = await requireFolder(io.cwd, positionals[0] ?? "");
    const opened = await openArchive(folder);
    const notice = opened.notices[0];
    if (notice !== undefined) {
      io.stderr(`verbatim compact: the saved conversation is unreadable: ${notice.reason}\n`);
      return EXIT_CHECK_FAILED;
    }
    const saved = opened.conversation;
    const provider = values.provider ?? saved.provider;
    const model = values.model ?? saved.model;
    if (provider === undefined || model === undefined) {
      throw usageError(
        this,
        "the saved conversation names no provider or model: pass --provider and --model",
      );
    }
    const preview = previewCompaction({
      history: saved.history,
      sentFacts: saved.sentFacts,
      lastRoundUsage: saved.lastRoundUsage,
      provider,
      model,
      running: false,
      backendKind: CLI_PROVIDERS.has(provider) ? "cli" : "provider",
      prices: defaultPriceBook,
    });
    if (values["dry-run"] === true) {
      io.stdout(
        values.json === true
          ? JSON.stringify({
              available: preview.available,
              ...(preview.reason === undefined ? {} : { reason: preview.reason }),
              inputTokens: preview.inputTokens,
              estimatedCost: preview.estimatedCost,
            }) + "\n"
          : describePreview(preview, provider, model),
      );
      return preview.available ? EXIT_OK : EXIT_CHECK_FAILED;
    }
    if (!preview.available) {
      io.stderr(`verbatim compact: compaction is not available (${preview.reason ?? "unknown"})\n`);
      return EXIT_CHECK_FAILED;
    }
    if (!isProviderId(provider)) {
      throw new VerbatimError("invalid_argument", `unknown provider ${provider}`, {
        where: "--provider",
        hint: `Use one of: ${PROVIDER_IDS.join(", ")}.`,
      });
    }
    const live = await openLiveConversation(folder, {
      backend: providerBackend({ provider, model, transport: { env: io.env } }),
    });
    const result = await live.conversation.compact();
    if (!result.ok) {
      if (values.json === true) {
        io.stdout(JSON.stringify({ compacted: false, reason: result.reason }) + "\n");
      }
      io.stderr(`verbatim compact: ${result.reason}\n`);
      return EXIT_CHECK_FAILED;
    }
    await live.save();
    const after = live.conversation.snapshot();
    io.stdout(
      values.json === true
        ? JSON.stringify({
            compacted: true,
            summaryCharacters: result.summary.length,
            historyMessages: after.history.length,
            estimatedCost: after.estimatedCost,
          }) + "\n"
        : `compacted: ${after.history.length} history messages now, summary of ${result.summary.length} characters\n`,
    );
    return EXIT_OK;
  },
};
