import { EXPORT_FORMATS, exportPackages, type ExportFormat } from "../../interop/index.js";
import { findPackages } from "../../interop/export/export-packages.js";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  parseCommandArgs,
  usageError,
  type Command,
} from "../command.js";
import { readInputFile } from "../paths.js";
import { terminalLine } from "../terminal-text.js";
import { loadServerCommand } from "../server-commands.js";

export const exportCommand: Command = {
  words: ["export"],
  usage:
    "<package | folder of packages | rows.jsonl …> | --from sqlite:<file> | postgres://… --subject S (--conversation ID | --message ID | --job ID)… --to openai-jsonl|chatml-jsonl [--system FILE]",
  summary:
    "Write each package's history, conversation of a database or job turn (of a rows file or a database) as one JSON line, OpenAI fine-tuning or ChatML, to stdout; the same input gives the same bytes.",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      {
        to: { type: "string" },
        system: { type: "string" },
        from: { type: "string" },
        subject: { type: "string" },
        conversation: { type: "string", multiple: true },
        message: { type: "string", multiple: true },
        job: { type: "string", multiple: true },
        call: { type: "string" },
        raw: { type: "string" },
      },
      { min: 0, max: Number.MAX_SAFE_INTEGER },
    );
    if (values.from !== undefined) {
      if (positionals.length > 0)
        throw usageError(this, "name packages or --from a database, not both");
      // The gateway store is the server package's: its command reads the database.
      return (await loadServerCommand("export database")).run(args, io);
    }
    const databaseOnly = ["subject", "conversation", "message", "job", "call", "raw"].filter(
      (name) => values[name as keyof typeof values] !== undefined,
    );
    if (databaseOnly.length > 0)
      throw usageError(this, `--${databaseOnly.join(", --")} go(es) with --from <database>`);
    if (positionals.length === 0) throw usageError(this, "name packages, rows files or --from");
    const to = values.to;
    if (to === undefined) throw usageError(this, "--to is required");
    if (!(EXPORT_FORMATS as readonly string[]).includes(to)) {
      throw usageError(
        this,
        `--to must be ${EXPORT_FORMATS.join(" or ")}, got ${JSON.stringify(to)}`,
      );
    }
    const system =
      values.system === undefined
        ? undefined
        : (await readInputFile(io.cwd, values.system)).toString("utf8");
    const packages = await findPackages(io.cwd, positionals);
    const exported = await exportPackages(packages, to as ExportFormat, system);
    let skipped = 0;
    for (const entry of exported) {
      if (entry.line !== undefined) io.stdout(entry.line);
      else {
        skipped++;
        io.stderr(
          `${terminalLine(`verbatim export: skipped ${entry.path}: ${entry.reason ?? ""}`)}\n`,
        );
      }
    }
    io.stderr(
      `verbatim export: ${exported.length - skipped} conversation(s) written, ${skipped} skipped\n`,
    );
    return exported.some(
      (entry) => entry.reason?.startsWith("its conversation cannot be read") === true,
    )
      ? EXIT_CHECK_FAILED
      : EXIT_OK;
  },
};
