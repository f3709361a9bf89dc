import { z } from "zod";
import { VerbatimError, type JsonValue } from "verbatim-llm/core";
import { isStorableText } from "verbatim-llm/internal";
import type { StoreDatabase } from "../../store/database.js";
import { findConversation } from "../../store/repositories/gateway-conversations.js";
import {
  insertJob,
  listTurns,
  updateJob,
  type JobRow,
} from "../../store/repositories/background-jobs.js";
import { listJobItems } from "../../store/repositories/background-job-items.js";
import type { StoreSchema } from "../../store/schema.js";
import { inTransaction } from "../../store/transaction.js";
import {
  projectTrajectoryToChatML,
  modelVisibleTrajectory,
  defaultSanitizer,
  type Sanitizer,
  type ChatMLTrajectory,
  type ModelVisibleTrajectory,
  type StoredTurnItem,
} from "verbatim-llm/trajectory";
import { newId } from "../ids.js";
import { checkCallerMetadata } from "../validation/caller-metadata.js";
import { checkStoredText, idSchema, parseOrThrow, subjectSchema } from "../validation/checks.js";
import { claimWakeEvents, closeRunningTurns, endJob, type WakeClaim } from "./job-end.js";
import { stateConflict } from "./job-errors.js";
import { jobRow } from "./job-lookup.js";
import { jobIdempotency, keyedWrite, replayJobKey } from "./job-idempotency.js";
import { jobFromRow, storedItemFromRow, turnFromRow } from "./job-rows.js";
import { appendItems, finishTurn, startTurn, steerTurn, type JobsContext } from "./job-turns.js";
import type {
  BackgroundAgentJob,
  JobTurn,
  StoredJobTrajectory,
  TurnItemInput,
  TurnStatus,
  WakeEvent,
} from "./job-types.js";
import type { Kysely } from "kysely";

export interface BackgroundAgentJobsOptions {
  /** Runs on every appended item (default: the default rules of src/trajectory). */
  readonly sanitizer?: Sanitizer;
  readonly now?: () => Date;
}

export const MAX_RETRY_BUDGET = 100;

const createJobSchema = z.strictObject({
  conversationId: idSchema,
  retryBudget: z.int().min(0).max(MAX_RETRY_BUDGET),
  metadata: z.unknown().optional(),
});

/**
 * Background agent jobs over one database (SPEC B7, B8, B11, B13): a job belongs to a subject
 * and reports to one gateway conversation; its turns hold an append-only stream of sanitized
 * items; its retry budget bounds its attempts; it is never compressed; when it ends it emits
 * one wake event carrying its result to the owning conversation. Jobs never write the
 * conversation's messages: the only gateway table they touch is `ai_gateway_conversations`,
 * read once to check that the owning conversation exists.
 */
export class BackgroundAgentJobs {
  readonly database: StoreDatabase;
  readonly #sanitizer: Sanitizer;
  readonly #now: () => Date;

  constructor(database: StoreDatabase, options: BackgroundAgentJobsOptions = {}) {
    this.database = database;
    this.#sanitizer = options.sanitizer ?? defaultSanitizer;
    this.#now = options.now ?? (() => new Date());
  }

  #time(): string {
    return this.#now().toISOString();
  }

  get #context(): JobsContext {
    return { database: this.database, sanitizer: this.#sanitizer, time: () => this.#time() };
  }

  #write<T>(work: (db: Kysely<StoreSchema>) => Promise<T>): Promise<T> {
    return inTransaction(this.database, work);
  }

  /**
   * Creates a queued job. With `idempotencyKey`, a repeat of the same request returns the job
   * the first one created (as it is now) and creates none; another request with the key is
   * `gateway_idempotency_key_reused`.
   */
  async createJob(
    subjectUid: string,
    input: {
      conversationId: string;
      retryBudget: number;
      metadata?: Record<string, string>;
      idempotencyKey?: string;
    },
  ): Promise<BackgroundAgentJob> {
    const subject = parseOrThrow(subjectSchema, subjectUid, "subjectUid");
    const { idempotencyKey, ...fields } = input;
    const request = parseOrThrow(createJobSchema, fields, "");
    const metadata = checkCallerMetadata(request.metadata, "metadata");
    const idempotency = jobIdempotency(subject, idempotencyKey, "job.create", {
      conversationId: request.conversationId,
      retryBudget: request.retryBudget,
      metadata,
    });
    // An id that breaks the stored-text rule names no conversation: none is looked up.
    const conversation = isStorableText(request.conversationId)
      ? await findConversation(this.database.db, subject, request.conversationId)
      : undefined;
    if (conversation === undefined) {
      throw new VerbatimError(
        "gateway_conversation_not_found",
        `no conversation ${request.conversationId} for this subject`,
        {
          where: "conversationId",
          hint: "A job reports to an existing conversation of its subject",
        },
      );
    }
    const now = this.#time();
    const row: JobRow = {
      id: newId("job"),
      subject_uid: subject,
      conversation_id: request.conversationId,
      status: "queued",
      retry_budget: request.retryBudget,
      attempts: 0,
      metadata: JSON.stringify(metadata),
      result: null,
      created_at: now,
      updated_at: now,
      ended_at: null,
    };
    if (idempotency === undefined) {
      await insertJob(this.database.db, row);
      return jobFromRow(row);
    }
    const outcome = await keyedWrite(this.database, idempotency, now, async (db) => {
      const earlier = await replayJobKey(db, idempotency);
      if (earlier !== undefined) return { replayed: true, result: earlier };
      await insertJob(db, row);
      return { replayed: false, value: row, result: { jobId: row.id } };
    });
    return outcome.replayed
      ? this.getJob(subject, outcome.result.jobId)
      : jobFromRow(outcome.value);
  }

  async getJob(subjectUid: string, jobId: string): Promise<BackgroundAgentJob> {
    return jobFromRow(await jobRow(this.database.db, subjectUid, jobId, false));
  }

  /**
   * Starts the next attempt: queued → running. Refused past the retry budget (B13). With
   * `idempotencyKey`, a repeat returns the job (as it is now) and starts nothing.
   */
  async startAttempt(
    subjectUid: string,
    jobId: string,
    idempotencyKey?: string,
  ): Promise<BackgroundAgentJob> {
    const idempotency = jobIdempotency(subjectUid, idempotencyKey, "job.attempt", { jobId });
    if (idempotency === undefined) {
      return this.#write(async (db) =>
        this.#startAttempt(db, await jobRow(db, subjectUid, jobId, true)),
      );
    }
    const outcome = await keyedWrite(this.database, idempotency, this.#time(), async (db) => {
      // After the job's lock: a concurrent repeat waits for the first and then finds its key.
      const job = await jobRow(db, subjectUid, jobId, true);
      const earlier = await replayJobKey(db, idempotency);
      if (earlier !== undefined) return { replayed: true, result: earlier };
      const started = await this.#startAttempt(db, job);
      return { replayed: false, value: started, result: { jobId: job.id } };
    });
    return outcome.replayed ? this.getJob(subjectUid, outcome.result.jobId) : outcome.value;
  }

  /** queued → running on the job locked in `db`'s transaction. */
  async #startAttempt(db: Kysely<StoreSchema>, job: JobRow): Promise<BackgroundAgentJob> {
    if (job.attempts >= job.retry_budget + 1) {
      throw new VerbatimError(
        "job_retry_budget_exhausted",
        `job ${job.id} has used all ${job.attempts} attempts its retry budget of ${job.retry_budget} allows`,
        { where: `job ${job.id}` },
      );
    }
    if (job.status !== "queued") throw stateConflict(`job ${job.id} is ${job.status}, not queued`);
    const changes = { status: "running", attempts: job.attempts + 1, updated_at: this.#time() };
    await updateJob(db, job.subject_uid, job.id, changes);
    return jobFromRow({ ...job, ...changes });
  }

  /**
   * Ends the running attempt as failed: the job is queued for another attempt while its retry
   * budget allows, else it fails and emits its wake event.
   */
  async failAttempt(subjectUid: string, jobId: string, error: string): Promise<BackgroundAgentJob> {
    checkStoredText(String(error), "error");
    return this.#write(async (db) => {
      const job = await jobRow(db, subjectUid, jobId, true);
      if (job.status !== "running")
        throw stateConflict(`job ${job.id} is ${job.status}, not running`);
      await closeRunningTurns(db, job, this.#time(), "failed");
      if (job.attempts < job.retry_budget + 1) {
        const changes = { status: "queued", updated_at: this.#time() };
        await updateJob(db, job.subject_uid, job.id, changes);
        return jobFromRow({ ...job, ...changes });
      }
      return endJob(db, job, this.#time(), "failed", null, String(error));
    });
  }

  /** Ends the job as succeeded with its result, and emits the wake event (B11). */
  async completeJob(
    subjectUid: string,
    jobId: string,
    result: JsonValue,
  ): Promise<BackgroundAgentJob> {
    checkStoredText(result, "result");
    return this.#write(async (db) => {
      const job = await jobRow(db, subjectUid, jobId, true);
      if (job.status !== "running")
        throw stateConflict(`job ${job.id} is ${job.status}, not running`);
      await closeRunningTurns(db, job, this.#time(), "completed");
      return endJob(db, job, this.#time(), "succeeded", result, null);
    });
  }

  /** Cancels a job that has not ended, and emits the wake event. */
  async cancelJob(
    subjectUid: string,
    jobId: string,
    reason = "cancelled",
  ): Promise<BackgroundAgentJob> {
    checkStoredText(reason, "reason");
    return this.#write(async (db) => {
      const job = await jobRow(db, subjectUid, jobId, true);
      if (["succeeded", "failed", "cancelled"].includes(job.status)) {
        throw stateConflict(`job ${job.id} already ended: ${job.status}`);
      }
      await closeRunningTurns(db, job, this.#time(), "cancelled");
      return endJob(db, job, this.#time(), "cancelled", null, reason);
    });
  }

  /**
   * Starts the job's next turn (index 0, 1, …) in the running attempt, with its first items;
   * with `idempotencyKey`, a repeat returns the turn the first request started.
   */
  async startTurn(
    subjectUid: string,
    jobId: string,
    items: readonly TurnItemInput[] = [],
    idempotencyKey?: string,
  ): Promise<{ turn: JobTurn; items: StoredTurnItem[] }> {
    return startTurn(this.#context, subjectUid, jobId, items, idempotencyKey);
  }

  /**
   * Appends items to a running turn (B7, B8) at the next positions, with the turn's current
   * revision. A key the turn already holds returns the stored row when the item is the same and
   * is `trajectory_item_key_conflict` when it differs; nothing is written then.
   */
  async appendItems(
    subjectUid: string,
    turnId: string,
    items: readonly TurnItemInput[],
  ): Promise<StoredTurnItem[]> {
    return appendItems(this.#context, subjectUid, turnId, items);
  }

  /**
   * Steers a turn, or prompts a finished one again (B8): raises its revision, marks it running
   * and appends the caller's messages (`client:` keys) at the new revision. Stored items are
   * never rewritten. Repeating a steer whose items are all stored changes nothing.
   */
  async steerTurn(
    subjectUid: string,
    turnId: string,
    items: readonly TurnItemInput[],
  ): Promise<{ turn: JobTurn; items: StoredTurnItem[] }> {
    return steerTurn(this.#context, subjectUid, turnId, items);
  }

  /** Ends a running turn. */
  async finishTurn(
    subjectUid: string,
    turnId: string,
    status: Exclude<TurnStatus, "running">,
  ): Promise<JobTurn> {
    return finishTurn(this.#context, subjectUid, turnId, status);
  }

  /** The job's stored trajectory: its turns in order and every row (B7). */
  async readTrajectory(subjectUid: string, jobId: string): Promise<StoredJobTrajectory> {
    const job = await jobRow(this.database.db, subjectUid, jobId, false);
    const [turns, items] = await Promise.all([
      listTurns(this.database.db, job.subject_uid, job.id),
      listJobItems(this.database.db, job.subject_uid, job.id),
    ]);
    return {
      job: jobFromRow(job),
      turns: turns.map(turnFromRow),
      rows: items.map(storedItemFromRow),
    };
  }

  /** The job's trajectory as ChatML (B9); turns without rows are empty turns. */
  async chatmlTrajectory(subjectUid: string, jobId: string): Promise<ChatMLTrajectory> {
    const stored = await this.readTrajectory(subjectUid, jobId);
    return projectTrajectoryToChatML(stored.rows, {
      turnOrder: stored.turns.map((turn) => turn.id),
    });
  }

  /** What the model sees of the job's trajectory (B12). */
  async modelVisibleTrajectory(subjectUid: string, jobId: string): Promise<ModelVisibleTrajectory> {
    return modelVisibleTrajectory(await this.chatmlTrajectory(subjectUid, jobId));
  }

  /**
   * Claims up to `limit` of the subject's unclaimed wake events (optionally one conversation's)
   * for `consumer`: each event is claimed exactly once, however many consumers claim at the same
   * time (B11).
   */
  async claimWakeEvents(subjectUid: string, input: WakeClaim): Promise<WakeEvent[]> {
    return claimWakeEvents(this.database, subjectUid, input, this.#time());
  }
}
