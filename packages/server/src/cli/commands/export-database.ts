import { VerbatimError } from "verbatim-llm/core";
import {
  EXPORT_FORMATS,
  chatMLLine,
  exportLine,
  type ExportFormat,
  type ExportOptions,
} from "verbatim-llm/interop";
import { projectItemsToChatML } from "verbatim-llm/trajectory";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  parseCommandArgs,
  readInputFile,
  usageError,
  type Command,
} from "verbatim-llm/cli";
import { GatewayConversations } from "../../gateway/conversations.js";
import { GatewayImageStore, imageHashesOf } from "../../gateway/images.js";
import { BackgroundAgentJobs } from "../../gateway/jobs/job-service.js";
import type { GatewayMessage } from "../../gateway/message-types.js";
import { GatewayMessageStore } from "../../gateway/message-store.js";
import { openDatabase } from "../../store/database.js";
import { parseDatabaseLocation } from "../../store/location.js";
import { checkSubjectUid } from "../../server/subject-uid.js";

/** One exported line, or why a named conversation, chain or job gave none. */
interface ExportedEntry {
  readonly what: string;
  readonly lines: readonly string[];
  readonly reason?: string;
}

function historyOf(chain: readonly GatewayMessage[]) {
  return chain.map((message) => ({ role: message.role, content: message.content }));
}

/** The export options of a chain: its images' kept bytes (as data URLs in the line). */
async function withImages(
  images: GatewayImageStore,
  subject: string,
  chain: readonly GatewayMessage[],
  options: ExportOptions,
): Promise<ExportOptions> {
  const held = await images.load(subject, imageHashesOf(chain));
  return held.size === 0 ? options : { ...options, images: (sha256) => held.get(sha256)?.bytes };
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
    "--from sqlite:<file> | postgres://… --subject <subject_uid> (--conversation ID | --message ID | --job ID)… --to openai-jsonl|chatml-jsonl [--system FILE]",
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
      },
      { min: 0, max: 0 },
    );
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
    const from = values.from ?? "";
    let location;
    try {
      location = parseDatabaseLocation(from.startsWith("sqlite:") ? from.slice(7) : from);
    } catch (error) {
      throw usageError(this, error instanceof VerbatimError ? error.describe() : String(error));
    }
    const system =
      values.system === undefined
        ? undefined
        : (await readInputFile(io.cwd, values.system)).toString("utf8");
    const format = to as ExportFormat;
    const database = await openDatabase(location, { poolSize: 1 });
    try {
      const store = new GatewayMessageStore(database);
      const gateway = new GatewayConversations(store);
      const service = new BackgroundAgentJobs(database);
      const images = new GatewayImageStore(database);
      const options: ExportOptions = system === undefined ? {} : { system };
      const entry = async (what: string, work: () => Promise<string[]>) => {
        try {
          return { what, lines: await work() };
        } catch (error) {
          if (!(error instanceof VerbatimError)) throw error;
          return { what, lines: [], reason: error.describe() };
        }
      };
      const exported: ExportedEntry[] = [];
      for (const id of conversations) {
        exported.push(
          await entry(`conversation ${id}`, async () => {
            const { messages: chain } = await gateway.chain(subject, id, () => []);
            if (chain.length === 0) return [];
            const withBytes = await withImages(images, subject, chain, options);
            return [exportLine(historyOf(chain), format, withBytes)];
          }),
        );
      }
      for (const id of messages) {
        exported.push(
          await entry(`message ${id}`, async () => {
            const chain = await store.readFullChain(subject, id);
            const withBytes = await withImages(images, subject, chain, options);
            return [exportLine(historyOf(chain), format, withBytes)];
          }),
        );
      }
      for (const id of jobs) {
        exported.push(
          await entry(`job ${id}`, async () => {
            const stored = await service.readTrajectory(subject, id);
            return stored.turns.map((turn) =>
              chatMLLine(
                projectItemsToChatML(
                  stored.rows.filter((row) => row.turn_id === turn.id).map((row) => row.item),
                ),
                format,
                system,
              ),
            );
          }),
        );
      }
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
    } finally {
      await database.close();
    }
  },
};
