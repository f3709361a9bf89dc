import type { ParseArgsConfig, parseArgs } from "node:util";
import { VerbatimError } from "../core/errors.js";
import type { CliIO } from "./io.js";

/**
 * One `verbatim` command. Exit codes (docs/cli.md): 0 success; 1 the input is readable but fails
 * the check the command makes; 2 usage errors and missing paths. Reasons go to stderr, never a
 * stack trace.
 */
export interface Command {
  /** The words that name it, e.g. ["archive", "show"]. */
  readonly words: readonly string[];
  /** One line: the arguments, e.g. `<package> [--json]`. */
  readonly usage: string;
  readonly summary: string;
  run(args: readonly string[], io: CliIO): Promise<number>;
}

/** Exit code 0: the command did what it was asked. */
export const EXIT_OK = 0;
/** Exit code 1: the input is readable but fails the check the command makes. */
export const EXIT_CHECK_FAILED = 1;
/** Exit code 2: a usage error or a missing path. */
export const EXIT_USAGE = 2;

type Options = NonNullable<ParseArgsConfig["options"]>;

/** What parseCommandArgs returns: parseArgs's values and positionals for these options. */
export type ParsedCommandArgs<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/** parseArgs with usage errors as VerbatimError("usage_error"). */
export function parseCommandArgs<O extends Options>(
  command: Pick<Command, "words" | "usage">,
  args: readonly string[],
  options: O,
  positionals: { min: number; max: number },
): ParsedCommandArgs<O> {
  let parsed;
  try {
    // Through getBuiltinModule, not `import … from "node:util"`: an ESM import of node:util
    // builds its whole namespace, which costs a command's start-up as much as a fifth of
    // `node -e 0` (bench/cli); this loads parseArgs alone.
    const { parseArgs: parse } = process.getBuiltinModule("node:util");
    parsed = parse({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError(command, error instanceof Error ? error.message : String(error));
  }
  const count = parsed.positionals.length;
  if (count < positionals.min || count > positionals.max) {
    throw usageError(command, `expected ${describeCount(positionals)} argument(s), got ${count}`);
  }
  return parsed;
}

function describeCount({ min, max }: { min: number; max: number }): string {
  return min === max ? String(min) : `${min} to ${max}`;
}

/** A usage_error naming the command's usage line. */
export function usageError(
  command: Pick<Command, "words" | "usage">,
  message: string,
): VerbatimError {
  return new VerbatimError("usage_error", message, {
    hint: `Usage: verbatim ${command.words.join(" ")} ${command.usage}`,
  });
}
