import { openArchive } from "../../archive/archive.js";
import { EXIT_CHECK_FAILED, EXIT_OK, parseCommandArgs, type Command } from "../command.js";
import { requireFolder } from "../paths.js";

export const archiveResave: Command = {
  words: ["archive", "resave"],
  usage: "<package>",
  summary:
    "Open a package's conversation and save it with default settings; prints unchanged or rewritten.",
  async run(args, io) {
    const { positionals } = parseCommandArgs(this, args, {}, { min: 1, max: 1 });
    const path = positionals[0] ?? "";
    const opened = await openArchive(await requireFolder(io.cwd, path));
    const { outcome } = await opened.archive.save(opened.conversation, opened.images);
    io.stdout(`${outcome}\n`);
    for (const notice of opened.notices) {
      io.stderr(`verbatim archive resave: ${path}: unreadable, kept as is: ${notice.reason}\n`);
    }
    return opened.notices.length > 0 ? EXIT_CHECK_FAILED : EXIT_OK;
  },
};
