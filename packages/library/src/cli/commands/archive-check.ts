import { summarizePackage } from "../../archive/summary.js";
import { EXIT_CHECK_FAILED, EXIT_OK, parseCommandArgs, type Command } from "../command.js";
import { requireFolder } from "../paths.js";

export const archiveCheck: Command = {
  words: ["archive", "check"],
  usage: "<package>",
  summary: "Exit 0 when agent/ is absent or readable format 1, 1 when it cannot be read.",
  async run(args, io) {
    const { positionals } = parseCommandArgs(this, args, {}, { min: 1, max: 1 });
    const path = positionals[0] ?? "";
    const summary = await summarizePackage(await requireFolder(io.cwd, path));
    if (!summary.readable) {
      io.stderr(`verbatim archive check: ${path}: unreadable: ${summary.reason ?? "unknown"}\n`);
      return EXIT_CHECK_FAILED;
    }
    io.stdout(
      summary.agentFolder
        ? `${path}: readable, format ${summary.formatVersion ?? 1}, ${summary.historyMessages} history messages\n`
        : `${path}: no saved conversation\n`,
    );
    return EXIT_OK;
  },
};
