import { createHash } from "node:crypto";
import { z } from "zod";
import {
  modelVisibleTrajectory,
  projectTrajectoryToChatML,
  type ModelUsage,
  type StoredTurnItem,
} from "verbatim-llm/trajectory";
import { modelUsageSchema, sumUsage } from "verbatim-llm/internal";
import type { BackgroundAgentJobs } from "../jobs/job-service.js";
import type { StoreDatabase } from "../../store/database.js";
import { jobChangeMark } from "../../store/repositories/console-jobs.js";
import { jobReply, storedItemSchema, turnReply } from "../jobs/shapes.js";
import { fitPageYielding } from "./fit-page.js";
import { projectionMetadataSchema, type ConsoleView } from "./project-in-slices.js";

export const trajectorySchema = z.object({
  view: z.enum(["stored", "chatml", "model-visible"]),
  items: z
    .array(storedItemSchema)
    .optional()
    .describe("view=stored: the turn's rows in position order."),
  messages: z
    .array(z.record(z.string(), z.unknown()))
    .optional()
    .describe("view=chatml or model-visible: the projected messages."),
  metadata: projectionMetadataSchema,
});

export const jobUsageSchema = z.object({
  reported: z
    .array(modelUsageSchema)
    .nullable()
    .describe("The run totals the job's source recorded (an import's `result.usage`), per model."),
  calls: modelUsageSchema
    .nullable()
    .describe("The sum of the usage the job's items carry (one per model call), over all turns."),
});

/** The usage items carry: each on the first item of the model call that produced it. */
function itemUsage(rows: readonly StoredTurnItem[]): ModelUsage[] {
  return rows.flatMap((row) => (row.item.usage === undefined ? [] : [row.item.usage]));
}

const endedSchema = z.object({ result: z.object({ usage: z.array(modelUsageSchema) }) });

/** The totals an import put in the job's result (inside its end record), when it put any. */
function reportedUsage(result: unknown): ModelUsage[] | null {
  const parsed = endedSchema.safeParse(result);
  return parsed.success ? parsed.data.result.usage : null;
}

/** A job's page, once the route has found its owner. */
export interface JobPageRequest {
  readonly jobId: string;
  /** The job's subject. */
  readonly owner: string;
  readonly view: ConsoleView;
  readonly pageLimitBytes: number;
}

async function trajectoryOf(
  turnId: string,
  rows: readonly StoredTurnItem[],
  view: ConsoleView,
  limitBytes: number,
): Promise<z.infer<typeof trajectorySchema>> {
  const chatml = projectTrajectoryToChatML(rows, { turnOrder: [turnId] });
  if (view === "stored") {
    return {
      view,
      items: rows.map((row) => ({ ...row, item: { ...row.item } as Record<string, unknown> })),
      metadata: chatml.metadata,
    };
  }
  const projected =
    view === "chatml"
      ? { messages: chatml.messages, metadata: chatml.metadata }
      : modelVisibleTrajectory(chatml);
  const page = await fitPageYielding(projected, limitBytes);
  return {
    view,
    messages: page.messages.map((message) => ({ ...message }) as Record<string, unknown>),
    metadata: page.metadata,
  };
}

/** A job's change mark as the console gives it, of its owner: short, for a query string. */
export async function changeMarkOf(
  database: StoreDatabase,
  owner: string,
  jobId: string,
): Promise<string> {
  const text = (await jobChangeMark(database.db, jobId, owner)) ?? "";
  return createHash("sha256").update(text).digest("base64url").slice(0, 22);
}

/**
 * The JSON reply (UTF-8) of a job's page: its change mark, the job, and each turn's trajectory
 * in one of the three views, cut to the page size limit. It runs in the console's worker
 * thread, or on the event loop when the store cannot be opened there (console/worker/pages.ts).
 */
export async function buildJobPage(
  database: StoreDatabase,
  jobs: BackgroundAgentJobs,
  request: JobPageRequest,
): Promise<Buffer> {
  // Read before the rows: a change between the two reads is seen by the next poll.
  const changeMark = await changeMarkOf(database, request.owner, request.jobId);
  const stored = await jobs.readTrajectory(request.owner, request.jobId);
  const rowsByTurn = new Map<string, StoredTurnItem[]>();
  for (const row of stored.rows) {
    const list = rowsByTurn.get(row.turn_id) ?? [];
    list.push(row);
    rowsByTurn.set(row.turn_id, list);
  }
  const calls = sumUsage(itemUsage(stored.rows));
  const reply = {
    change_mark: changeMark,
    job: jobReply(stored.job),
    usage: { reported: reportedUsage(stored.job.result), calls: calls ?? null },
    turns: await Promise.all(
      stored.turns.map(async (turn) => ({
        ...turnReply(turn),
        usage: sumUsage(itemUsage(rowsByTurn.get(turn.id) ?? [])) ?? null,
        trajectory: await trajectoryOf(
          turn.id,
          rowsByTurn.get(turn.id) ?? [],
          request.view,
          request.pageLimitBytes,
        ),
      })),
    ),
  };
  // The text the route's serializer wrote (JSON.stringify), byte for byte.
  return Buffer.from(JSON.stringify(reply));
}
