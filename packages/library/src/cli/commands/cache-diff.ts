import { checkCachePrefix } from "../../providers/index.js";
import { EXIT_CHECK_FAILED, EXIT_OK, parseCommandArgs, type Command } from "../command.js";
import { readInputFile } from "../paths.js";

export const cacheDiff: Command = {
  words: ["cache-diff"],
  usage: "<before.json> <after.json>",
  summary: "Check that the second request body extends the first as the prompt cache needs (A27).",
  async run(args, io) {
    const { positionals } = parseCommandArgs(this, args, {}, { min: 2, max: 2 });
    const [beforePath = "", afterPath = ""] = positionals;
    const before = (await readInputFile(io.cwd, beforePath)).toString("utf8");
    const after = (await readInputFile(io.cwd, afterPath)).toString("utf8");
    const result = checkCachePrefix(before, after);
    if (result.ok) {
      io.stdout(`appended ${result.appended}\n`);
      return EXIT_OK;
    }
    const { difference } = result;
    const place =
      difference.messageIndex === undefined
        ? "a top-level field"
        : `message ${difference.messageIndex}`;
    io.stderr(
      `verbatim cache-diff: first difference in ${place} at ${difference.path}: ${difference.reason}\n`,
    );
    return EXIT_CHECK_FAILED;
  },
};
