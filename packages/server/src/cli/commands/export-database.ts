import { VerbatimError } from "verbatim-llm/core";
import { EXPORT_FORMATS, type ExportFormat } from "verbatim-llm/interop";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  parseCommandArgs,
  readInputFile,
  usageError,
  type Command,
} from "verbatim-llm/internal";
import { exportFromDatabase } from "../../gateway/export/lines.js";
import { exportRecordedBody } from "../../gateway/export/recorded-body.js";
import { parseDatabaseLocation } from "../../store/location.js";
import { checkSubjectUid } from "../../gateway/subject-uid.js";
import { openOptionsFromEnv } from "../../server/connection-budget.js";

/** `--from` as a database location (`sqlite:` is optional). */
function locationOf(command: Command, from: string) {
  try {
    return parseDatabaseLocation(from.startsWith("sqlite:") ? from.slice(7) : from);
  } catch (error) {
    throw usageError(command, error instanceof VerbatimError ? error.describe() : String(error));
  }
}

/**
 * `verbatim export --from … --subject S --call ID --raw request|response`: a recorded call's
 * request or response body, byte for byte as sent and as received (a response still
 * content-encoded), to stdout.
 */
async function exportRawCall(
  command: Command,
  values: { readonly call: string; readonly raw?: string | undefined; readonly from: string },
  subject: string,
  others: readonly string[],
  io: Parameters<Command["run"]>[1],
): Promise<number> {
  if (others.length > 0)
    throw usageError(command, `--call goes alone: not with --${others.join(", --")}`);
  if (values.raw !== "request" && values.raw !== "response")
    throw usageError(
      command,
      `--raw must be request or response, got ${JSON.stringify(values.raw ?? "")}`,
    );
  const body = await exportRecordedBody({
    location: locationOf(command, values.from),
    open: openOptionsFromEnv(io.env),
    subject,
    id: values.call,
    which: values.raw,
  });
  io.stdout(body);
  return EXIT_OK;
}

/**
 * `verbatim export --from sqlite:<file> | postgres://… --subject S --conversation ID |
 * --message ID | --job ID … --to openai-jsonl|chatml-jsonl`: conversations of the gateway store
 * (their current chain, or the chain ending at a message) one line each, and jobs one line per
 * turn, in the format `verbatim export` writes for packages and rows files (docs/interop.md,
 * "Exports"). Nothing is written to the database; the same rows give the same bytes.
 */
export const exportDatabase: Command = {
  words: ["export"],
  usage:
    "--from sqlite:<file> | postgres://… --subject <subject_uid> ((--conversation ID | --message ID | --job ID)… --to openai-jsonl|chatml-jsonl [--system FILE] | --call ID --raw request|response)",
  summary:
    "Write conversations (one line each) and jobs (one line per turn) of a database as OpenAI fine-tuning or ChatML JSON lines to stdout.",
  async run(args, io) {
    const { values } = parseCommandArgs(
      this,
      args,
      {
        from: { type: "string" },
        subject: { type: "string" },
        conversation: { type: "string", multiple: true },
        message: { type: "string", multiple: true },
        job: { type: "string", multiple: true },
        to: { type: "string" },
        system: { type: "string" },
        call: { type: "string" },
        raw: { type: "string" },
      },
      { min: 0, max: 0 },
    );
    if (values.call !== undefined) {
      if (values.subject === undefined) throw usageError(this, "--subject is required with --from");
      const others = ["conversation", "message", "job", "to", "system"].filter(
        (name) => values[name as keyof typeof values] !== undefined,
      );
      return exportRawCall(
        this,
        { call: values.call, raw: values.raw, from: values.from ?? "" },
        checkSubjectUid(values.subject),
        others,
        io,
      );
    }
    if (values.raw !== undefined) throw usageError(this, "--raw goes with --call ID");
    const to = values.to;
    if (to === undefined || !(EXPORT_FORMATS as readonly string[]).includes(to)) {
      throw usageError(
        this,
        `--to must be ${EXPORT_FORMATS.join(" or ")}, got ${JSON.stringify(to ?? "")}`,
      );
    }
    if (values.subject === undefined) throw usageError(this, "--subject is required with --from");
    const subject = checkSubjectUid(values.subject);
    const conversations = values.conversation ?? [];
    const messages = values.message ?? [];
    const jobs = values.job ?? [];
    if (conversations.length + messages.length + jobs.length === 0)
      throw usageError(this, "name what to export: --conversation ID, --message ID or --job ID");
    const location = locationOf(this, values.from ?? "");
    const system =
      values.system === undefined
        ? undefined
        : (await readInputFile(io.cwd, values.system)).toString("utf8");
    const exported = await exportFromDatabase({
      location,
      open: openOptionsFromEnv(io.env),
      subject,
      conversations,
      messages,
      jobs,
      format: to as ExportFormat,
      system,
    });
    let written = 0;
    for (const { what, lines, reason } of exported) {
      for (const line of lines) io.stdout(line);
      written += lines.length;
      if (reason !== undefined) io.stderr(`verbatim export: skipped ${what}: ${reason}\n`);
      else if (lines.length === 0) io.stderr(`verbatim export: skipped ${what}: it is empty\n`);
    }
    const refused = exported.filter((entry) => entry.reason !== undefined).length;
    io.stderr(`verbatim export: ${written} line(s) written, ${refused} not found or refused\n`);
    return refused > 0 ? EXIT_CHECK_FAILED : EXIT_OK;
  },
};
