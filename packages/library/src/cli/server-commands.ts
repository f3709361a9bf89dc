import { VerbatimError } from "../core/errors.js";
import type { Command } from "./command.js";

/** The commands the server package adds to `verbatim` (docs/cli.md). */
export type ServerCommandName =
  | "serve"
  | "keys create"
  | "keys revoke"
  | "db migrate"
  | "db index"
  | "db prune"
  | "db delete-subject"
  | "import database"
  | "export database"
  | "cache-report";

/** The package that holds them; looked up only when one of them runs. */
const SERVER_PACKAGE = "verbatim-llm-server";

function isMissingServerPackage(error: unknown): boolean {
  return (
    error instanceof Error &&
    "code" in error &&
    (error.code === "ERR_MODULE_NOT_FOUND" || error.code === "MODULE_NOT_FOUND") &&
    error.message.includes(SERVER_PACKAGE)
  );
}

/**
 * Loads one of the server package's commands. The library never depends on the server package:
 * the server's commands are found at run time, in the server package installed beside it.
 */
export async function loadServerCommand(name: ServerCommandName): Promise<Command> {
  const specifier = `${SERVER_PACKAGE}/cli`;
  let module: unknown;
  try {
    module = await import(specifier);
  } catch (error) {
    if (!isMissingServerPackage(error)) throw error;
    throw new VerbatimError(
      "server_package_missing",
      `verbatim ${name} is a command of the server package, which is not installed`,
      {
        hint: `Install it beside the library (npm install ${SERVER_PACKAGE}), or run npx ${SERVER_PACKAGE} ${name}`,
      },
    );
  }
  const loaders =
    typeof module === "object" && module !== null && "serverCommands" in module
      ? (module.serverCommands as Readonly<Record<string, (() => Promise<Command>) | undefined>>)
      : undefined;
  const load = loaders?.[name];
  if (load === undefined) {
    throw new VerbatimError(
      "server_package_missing",
      `the installed ${SERVER_PACKAGE} has no command "${name}"`,
      { hint: `Install the same version of ${SERVER_PACKAGE} as of verbatim-llm` },
    );
  }
  return load();
}
