import { VerbatimError } from "verbatim-llm/core";
import { exportLine, type ExportFormat, type ExportOptions } from "verbatim-llm/interop";
import { chatMLLine } from "verbatim-llm/internal";
import { projectItemsToChatML } from "verbatim-llm/trajectory";
import { GatewayConversations } from "../conversations/conversations.js";
import { GatewayImageStore, imageHashesOf } from "../conversations/images.js";
import { BackgroundAgentJobs } from "../jobs/job-service.js";
import type { GatewayMessage } from "../conversations/message-types.js";
import { GatewayMessageStore } from "../conversations/message-store.js";
import { openDatabase, type OpenDatabaseOptions } from "../../store/database.js";
import type { DatabaseLocation } from "../../store/location.js";

/** One exported line, or why a named conversation, chain or job gave none. */
export interface ExportedEntry {
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

/** What `exportFromDatabase` writes: a subject's conversations, chains and jobs, by id. */
export interface DatabaseExportOptions {
  readonly location: DatabaseLocation;
  /** How to open PostgreSQL (behind a pooler: VERBATIM_PG_POOLER). */
  readonly open?: OpenDatabaseOptions;
  readonly subject: string;
  /** Conversations: each one's current chain, one line. */
  readonly conversations: readonly string[];
  /** Messages: the chain ending at each, one line. */
  readonly messages: readonly string[];
  /** Jobs: one line per turn. */
  readonly jobs: readonly string[];
  readonly format: ExportFormat;
  /** A system message put first in each line. */
  readonly system?: string | undefined;
}

/**
 * The lines of the named conversations, chains and jobs of a database, in the format `verbatim
 * export` writes for packages and rows files (docs/interop.md, "Exports"), in the order named; an
 * id that is not found or is refused gives no lines and its reason. Nothing is written to the
 * database; the same rows give the same bytes.
 */
export async function exportFromDatabase(
  options: DatabaseExportOptions,
): Promise<readonly ExportedEntry[]> {
  const { subject, format, system } = options;
  const database = await openDatabase(options.location, { ...options.open, poolSize: 1 });
  try {
    const store = new GatewayMessageStore(database);
    const gateway = new GatewayConversations(store);
    const service = new BackgroundAgentJobs(database);
    const images = new GatewayImageStore(database);
    const exportOptions: ExportOptions = system === undefined ? {} : { system };
    const entry = async (what: string, work: () => Promise<string[]>): Promise<ExportedEntry> => {
      try {
        return { what, lines: await work() };
      } catch (error) {
        if (!(error instanceof VerbatimError)) throw error;
        return { what, lines: [], reason: error.describe() };
      }
    };
    const exported: ExportedEntry[] = [];
    for (const id of options.conversations) {
      exported.push(
        await entry(`conversation ${id}`, async () => {
          const { messages: chain } = await gateway.chain(subject, id, () => []);
          if (chain.length === 0) return [];
          const withBytes = await withImages(images, subject, chain, exportOptions);
          return [exportLine(historyOf(chain), format, withBytes)];
        }),
      );
    }
    for (const id of options.messages) {
      exported.push(
        await entry(`message ${id}`, async () => {
          const chain = await store.readFullChain(subject, id);
          const withBytes = await withImages(images, subject, chain, exportOptions);
          return [exportLine(historyOf(chain), format, withBytes)];
        }),
      );
    }
    for (const id of options.jobs) {
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
    return exported;
  } finally {
    await database.close();
  }
}
