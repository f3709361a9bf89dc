import { isVerbatimError } from "../core/errors.js";
import { EXIT_CHECK_FAILED, EXIT_OK, EXIT_USAGE, type Command } from "./command.js";
import { commandEntries, type CommandEntry } from "./commands/index.js";
import { processIO, type CliIO } from "./io.js";

async function helpText(): Promise<string> {
  const commands = await Promise.all(commandEntries.map((entry) => entry.load()));
  const lines = [
    "verbatim: keep LLM agent conversations and trajectories verbatim.",
    "",
    "Usage: verbatim <command> [arguments]",
    "",
    "Commands:",
  ];
  const width = Math.max(...commands.map((command) => command.words.join(" ").length));
  for (const command of commands) {
    lines.push(`  ${command.words.join(" ").padEnd(width)}  ${command.summary}`);
  }
  lines.push(
    "",
    "Each command takes --help. Exit codes: 0 ok, 1 check failed, 2 usage error. See docs/cli.md.",
  );
  return lines.join("\n") + "\n";
}

async function findCommand(
  argv: readonly string[],
): Promise<{ command: Command; rest: readonly string[] } | undefined> {
  let best: CommandEntry | undefined;
  for (const entry of commandEntries) {
    const matches = entry.words.every((word, index) => argv[index] === word);
    if (matches && (best === undefined || entry.words.length > best.words.length)) best = entry;
  }
  if (best === undefined) return undefined;
  return { command: await best.load(), rest: argv.slice(best.words.length) };
}

/** Runs the `verbatim` command line; returns the exit code. Never throws. */
export async function main(argv: readonly string[], io: CliIO = processIO): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.stdout(await helpText());
    return argv.length === 0 ? EXIT_USAGE : EXIT_OK;
  }
  const found = await findCommand(argv);
  if (found === undefined) {
    io.stderr(`verbatim: unknown command "${argv.join(" ")}". Run verbatim --help for the list.\n`);
    return EXIT_USAGE;
  }
  const { command, rest } = found;
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(
      `Usage: verbatim ${command.words.join(" ")} ${command.usage}\n\n${command.summary}\n`,
    );
    return EXIT_OK;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (isVerbatimError(error)) {
      io.stderr(`verbatim ${command.words.join(" ")}: ${error.describe()}\n`);
      return error.code === "usage_error" || error.code === "path_not_found"
        ? EXIT_USAGE
        : EXIT_CHECK_FAILED;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`verbatim ${command.words.join(" ")}: internal error: ${message}\n`);
    return EXIT_CHECK_FAILED;
  }
}
