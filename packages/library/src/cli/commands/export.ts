import {
  EXPORT_FORMATS,
  exportPackages,
  findPackages,
  type ExportFormat,
} from "../../interop/index.js";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  parseCommandArgs,
  usageError,
  type Command,
} from "../command.js";
import { readInputFile } from "../paths.js";

export const exportCommand: Command = {
  words: ["export"],
  usage:
    "<package | folder of packages | rows.jsonl …> --to openai-jsonl|chatml-jsonl [--system FILE]",
  summary:
    "Write each package's history (or each job turn of a rows file) as one JSON line, OpenAI fine-tuning or ChatML, to stdout; the same input gives the same bytes.",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      { to: { type: "string" }, system: { type: "string" } },
      { min: 1, max: Number.MAX_SAFE_INTEGER },
    );
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
        io.stderr(`verbatim export: skipped ${entry.path}: ${entry.reason ?? ""}\n`);
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
