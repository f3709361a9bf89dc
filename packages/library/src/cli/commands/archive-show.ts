import { summarizePackage, type PackageSummary } from "../../archive/summary.js";
import { EXIT_OK, parseCommandArgs, type Command } from "../command.js";
import { requireFolder } from "../paths.js";
import { terminalLines } from "../terminal-text.js";

function counts(byType: Record<string, number>): string {
  const parts = Object.entries(byType).map(([type, count]) => `${type} ${count}`);
  return parts.length === 0 ? "none" : parts.join(", ");
}

function describe(summary: PackageSummary): string {
  const lines = [`package: ${summary.package}`];
  if (!summary.agentFolder)
    return terminalLines(lines.concat("agent/: absent (no saved conversation)"));
  if (!summary.readable) {
    lines.push(`readable: no (${summary.reason ?? "unknown reason"})`);
    if (summary.formatVersion !== null) lines.push(`format version: ${summary.formatVersion}`);
    return terminalLines(lines);
  }
  const cost = summary.estimatedCost;
  lines.push(
    "readable: yes",
    `format version: ${summary.formatVersion ?? "none"}`,
    `provider: ${summary.provider ?? "none"}`,
    `model: ${summary.model ?? "none"}`,
    `items: ${summary.items.total} (${counts(summary.items.byType)})`,
    `history messages: ${summary.historyMessages}`,
    `blocks: ${summary.blocks.total} (${counts(summary.blocks.byType)})`,
    `turns: ${summary.turns}; queued: ${summary.queued}; unsent: ${summary.unsent}`,
    `images: ${summary.images.kept} kept (${summary.images.keptBytes} bytes), ${summary.images.omitted} omitted (${summary.images.unreadable} of them because the file is missing or wrong)`,
  );
  if (summary.usage !== null) {
    const usage = summary.usage;
    lines.push(
      `usage: input ${usage.input}, output ${usage.output}, cache read ${usage.cacheRead}, cache write ${usage.cacheWrite}, web searches ${usage.webSearchRequests}`,
    );
  }
  if (cost !== null) {
    lines.push(`cost: ${cost.kind}${"dollars" in cost ? ` $${cost.dollars}` : ""}`);
  }
  return terminalLines(lines);
}

export const archiveShow: Command = {
  words: ["archive", "show"],
  usage: "<package> [--json]",
  summary: "Describe the saved conversation of a package: readable or not, counts, images, usage.",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      { json: { type: "boolean" } },
      { min: 1, max: 1 },
    );
    const folder = await requireFolder(io.cwd, positionals[0] ?? "");
    const summary = await summarizePackage(folder);
    io.stdout(values.json === true ? JSON.stringify(summary) + "\n" : describe(summary));
    return EXIT_OK;
  },
};
