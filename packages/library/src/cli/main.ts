import { isVerbatimError } from "../core/errors.js";
import { EXIT_CHECK_FAILED, EXIT_OK, EXIT_USAGE } from "./command.js";
import { commandEntries, type CommandEntry } from "./commands/index.js";
import { commandHelp, groupEntries, groupHelp, mainHelp } from "./help.js";
import { processIO, type CliIO } from "./io.js";
import { terminalLine } from "./terminal-text.js";
import { packageVersion } from "./version.js";

const isHelpFlag = (word: string | undefined) => word === "--help" || word === "-h";

/** The entry whose words start argv, the longest such. */
function findEntry(argv: readonly string[]): CommandEntry | undefined {
  let best: CommandEntry | undefined;
  for (const entry of commandEntries) {
    const matches = entry.words.every((word, index) => argv[index] === word);
    if (matches && (best === undefined || entry.words.length > best.words.length)) best = entry;
  }
  return best;
}

/**
 * Runs the `verbatim` command line; returns the exit code. Never throws. Help and the version
 * are printed from the command table alone; only the command that runs is loaded.
 */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  const first = argv[0];
  if (first === undefined || isHelpFlag(first) || first === "help") {
    io.stdout(mainHelp(commandEntries));
    return first === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (first === "--version" || first === "-v") {
    io.stdout(`${packageVersion()}\n`);
    return EXIT_OK;
  }
  const entry = findEntry(argv);
  if (entry === undefined) {
    const group = groupEntries(commandEntries, first);
    if (group.length > 0 && (argv.length === 1 || (argv.length === 2 && isHelpFlag(argv[1])))) {
      io.stdout(groupHelp(first, group));
      return EXIT_OK;
    }
    const known =
      group.length > 0
        ? ` The ${first} commands: ${group.map((candidate) => candidate.words.join(" ")).join(", ")}.`
        : "";
    io.stderr(
      `verbatim: unknown command "${argv.join(" ")}".${known} Run verbatim --help for the list.\n`,
    );
    return EXIT_USAGE;
  }
  const rest = argv.slice(entry.words.length);
  const name = entry.words.join(" ");
  if (rest.some(isHelpFlag)) {
    io.stdout(commandHelp(entry));
    return EXIT_OK;
  }
  try {
    const command = await entry.load();
    return await command.run(rest, io);
  } catch (error) {
    if (isVerbatimError(error)) {
      io.stderr(`verbatim ${name}: ${terminalLine(error.describe())}\n`);
      return error.code === "usage_error" || error.code === "path_not_found"
        ? EXIT_USAGE
        : EXIT_CHECK_FAILED;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`verbatim ${name}: internal error: ${terminalLine(message)}\n`);
    return EXIT_CHECK_FAILED;
  }
}
