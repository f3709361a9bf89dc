import { basename } from "node:path";
import { VerbatimError, sha256Hex } from "verbatim-llm/core";
import type { TrajectorySource } from "verbatim-llm/interop";
import type { ImportedJob } from "verbatim-llm/internal";
import { BackgroundAgentJobs } from "../jobs/job-service.js";
import { MAX_ITEMS_PER_APPEND } from "../jobs/job-items.js";
import type { BackgroundAgentJob, TurnItemInput } from "../jobs/job-types.js";
import { GatewayMessageStore } from "../conversations/message-store.js";
import type { StoreDatabase } from "../../store/database.js";
import { isUniqueViolation } from "../../store/errors.js";
import { listJobIdsOfConversation } from "../../store/repositories/background-jobs.js";
import {
  findIdempotencyKey,
  insertIdempotencyKey,
} from "../../store/repositories/gateway-idempotency.js";

/** What happened to one imported job in the store. */
export type JobOutcome = "imported" | "unchanged" | "refused";

export interface JobImport {
  /** The job's id in the source's terms (`swe-agent:<run>`, `codex:<session>`, …). */
  readonly sourceId: string;
  readonly file: string;
  readonly outcome: JobOutcome;
  readonly reason?: string;
  readonly conversationId?: string;
  readonly jobId?: string;
  readonly turns: number;
  readonly rows: number;
}

/** The operation recorded with an import's key in the store's idempotency keys. */
const IMPORT_OPERATION = "import-job";
const ENDED = new Set(["succeeded", "failed", "cancelled"]);

/**
 * Imports trajectory jobs into the store as background-agent jobs, through the job service
 * (docs/interop.md, "Trajectories into a database"). Each job gets a conversation of its own
 * (jobs report to a conversation; its metadata names the source), found again on a re-run by
 * an idempotency key of the source and the job's source id. A job already imported with the
 * same content is `unchanged`; with other content it is `refused` (stored items are never
 * rewritten); an import cut short before its job succeeded is cancelled and imported again.
 */
export class JobImporter {
  readonly #jobs: BackgroundAgentJobs;
  readonly #store: GatewayMessageStore;

  constructor(
    readonly database: StoreDatabase,
    readonly subject: string,
    readonly source: TrajectorySource,
  ) {
    this.#jobs = new BackgroundAgentJobs(database);
    this.#store = new GatewayMessageStore(database);
  }

  async importJob(file: string, job: ImportedJob): Promise<JobImport> {
    const rows = job.turns.reduce((sum, turn) => sum + turn.rows.length, 0);
    const base = { sourceId: job.sourceId, file, turns: job.turns.length, rows };
    const content = sha256Hex(
      job.turns
        .map(
          (turn) =>
            `${turn.sourceTurnId}\n${turn.rows.map((row) => JSON.stringify([row.item_key, row.item])).join("\n")}`,
        )
        .join("\n\n") + (job.usage === undefined ? "" : `\n\nusage ${JSON.stringify(job.usage)}`),
    );
    let conversationId: string | undefined;
    let created: BackgroundAgentJob | undefined;
    try {
      conversationId = await this.#conversationFor(file, job);
      for (const jobId of await listJobIdsOfConversation(
        this.database.db,
        this.subject,
        conversationId,
      )) {
        const held = await this.#jobs.getJob(this.subject, jobId);
        if (held.status === "succeeded") {
          return held.metadata.sha256 === content
            ? { ...base, outcome: "unchanged", conversationId, jobId }
            : {
                ...base,
                outcome: "refused",
                reason: `the store already holds this job (${jobId}) imported from other content; stored items are never rewritten`,
                conversationId,
                jobId,
              };
        }
        if (!ENDED.has(held.status)) {
          await this.#jobs.cancelJob(this.subject, jobId, "import cut short; imported again");
        }
      }
      created = await this.#jobs.createJob(this.subject, {
        conversationId,
        retryBudget: 0,
        metadata: {
          source: this.source,
          source_id: job.sourceId.slice(0, 512),
          file: basename(file).slice(0, 512),
          sha256: content,
        },
      });
      await this.#jobs.startAttempt(this.subject, created.id);
      const turnIds: { turn_id: string; source_turn_id: string }[] = [];
      for (const turn of job.turns) {
        const items: TurnItemInput[] = turn.rows.map((row) => ({
          item_key: row.item_key,
          item: row.item,
        }));
        const started = await this.#jobs.startTurn(
          this.subject,
          created.id,
          items.slice(0, MAX_ITEMS_PER_APPEND),
        );
        for (let from = MAX_ITEMS_PER_APPEND; from < items.length; from += MAX_ITEMS_PER_APPEND) {
          await this.#jobs.appendItems(
            this.subject,
            started.turn.id,
            items.slice(from, from + MAX_ITEMS_PER_APPEND),
          );
        }
        await this.#jobs.finishTurn(this.subject, started.turn.id, "completed");
        turnIds.push({ turn_id: started.turn.id, source_turn_id: turn.sourceTurnId });
      }
      await this.#jobs.completeJob(this.subject, created.id, {
        imported: this.source,
        source_id: job.sourceId,
        file: basename(file),
        sha256: content,
        turns: turnIds,
        // The run totals the source recorded: the job view shows them beside the calls' sum.
        ...(job.usage === undefined
          ? {}
          : {
              usage: job.usage.map((usage) =>
                Object.fromEntries(
                  Object.entries(usage).filter(
                    (entry): entry is [string, string | number] => entry[1] !== undefined,
                  ),
                ),
              ),
            }),
      });
      return { ...base, outcome: "imported", conversationId, jobId: created.id };
    } catch (error) {
      if (!(error instanceof VerbatimError)) throw error;
      if (created !== undefined) {
        await this.#jobs
          .cancelJob(this.subject, created.id, `import refused: ${error.message}`.slice(0, 2000))
          .catch(() => undefined);
      }
      return {
        ...base,
        outcome: "refused",
        reason: error.describe(),
        ...(conversationId === undefined ? {} : { conversationId }),
        ...(created === undefined ? {} : { jobId: created.id }),
      };
    }
  }

  /**
   * The conversation that owns the job: the one an earlier import of the same source id made
   * (found by the import's idempotency key), or a new one whose metadata names the source.
   */
  async #conversationFor(file: string, job: ImportedJob): Promise<string> {
    const key = `import-job-${sha256Hex(`${this.source}\u0000${job.sourceId}`).slice(0, 48)}`;
    for (let attempt = 1; ; attempt++) {
      const held = await findIdempotencyKey(this.database.db, this.subject, key);
      if (held !== undefined) {
        const recorded = JSON.parse(held.result) as { conversationId?: unknown };
        if (held.operation !== IMPORT_OPERATION || typeof recorded.conversationId !== "string") {
          throw new VerbatimError(
            "gateway_idempotency_key_reused",
            `the idempotency key ${key} was used by another request than an import`,
            { where: "idempotencyKey", hint: "Import into another subject" },
          );
        }
        return recorded.conversationId;
      }
      const conversation = await this.#store.createConversation(this.subject, {
        metadata: {
          source: this.source,
          source_id: job.sourceId.slice(0, 512),
          file: basename(file).slice(0, 512),
          kind: "imported job",
        },
      });
      try {
        await insertIdempotencyKey(this.database.db, {
          subject_uid: this.subject,
          idempotency_key: key,
          operation: IMPORT_OPERATION,
          request_sha256: sha256Hex(`${this.source}\u0000${job.sourceId}`),
          result: JSON.stringify({ conversationId: conversation.id }),
          created_at: this.#store.now(),
        });
        return conversation.id;
      } catch (error) {
        // Another import of the same job recorded its key first: use its conversation.
        if (attempt >= 2 || !isUniqueViolation(error)) throw error;
      }
    }
  }
}
