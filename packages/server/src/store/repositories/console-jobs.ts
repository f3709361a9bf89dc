import { sql, type Kysely } from "kysely";
import { ACROSS_SUBJECTS } from "../subject-keys.js";
import type { StoreSchema } from "../schema.js";

/** The console's filter of the job list; every field optional (docs/server/console.md, "Console"). */
export interface ConsoleJobFilter {
  readonly subjectUid?: string | undefined;
  /** A `LIKE` pattern with `\` as its escape (the caller escapes the prefix's wildcards). */
  readonly subjectLikePattern?: string | undefined;
  /** ISO times: created at or after, and before. */
  readonly createdAfter?: string | undefined;
  readonly createdBefore?: string | undefined;
  readonly status?: string | undefined;
  readonly conversationId?: string | undefined;
  readonly limit: number;
  /** The key (`created_at`, `id`) of the previous page's last job; none for the first page. */
  readonly after?: readonly [createdAt: string, id: string] | undefined;
}

/** Jobs of every subject, newest first, as the console lists them: a page by key, not offset. */
export async function listJobsForConsole(db: Kysely<StoreSchema>, filter: ConsoleJobFilter) {
  let query = db
    .selectFrom("background_agent_jobs")
    .select([
      "id",
      "subject_uid",
      "conversation_id",
      "status",
      "attempts",
      "retry_budget",
      "created_at",
      "updated_at",
    ]);
  if (filter.subjectUid !== undefined) query = query.where("subject_uid", "=", filter.subjectUid);
  if (filter.subjectLikePattern !== undefined) {
    query = query.where(sql<boolean>`subject_uid like ${filter.subjectLikePattern} escape '\\'`);
  }
  if (filter.createdAfter !== undefined)
    query = query.where("created_at", ">=", filter.createdAfter);
  if (filter.createdBefore !== undefined)
    query = query.where("created_at", "<", filter.createdBefore);
  if (filter.status !== undefined) query = query.where("status", "=", filter.status);
  if (filter.conversationId !== undefined)
    query = query.where("conversation_id", "=", filter.conversationId);
  if (filter.after !== undefined) {
    const [createdAt, id] = filter.after;
    query = query.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(createdAt, id)));
  }
  return (
    query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(filter.limit)
      // Without one subject it is the operator's list over every subject (a prefix names many).
      .$if(filter.subjectUid === undefined, (list) => list.modifyEnd(sql.raw(ACROSS_SUBJECTS)))
      .execute()
  );
}

/**
 * The subject that owns a job, whoever it is: the console is given only the job's id, and its
 * other reads of the job name the subject this finds (served by the index on the job's id).
 */
export async function findJobOwner(
  db: Kysely<StoreSchema>,
  jobId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("background_agent_jobs")
    .select("subject_uid")
    .where("id", "=", jobId)
    // The console knows only the id: this finds the owner the next statements name.
    .modifyEnd(sql.raw(ACROSS_SUBJECTS))
    .executeTakeFirst();
  return row?.subject_uid;
}

/**
 * What changes whenever a job or its turns do (a status, a new turn, a turn's items or
 * revision): the console's long polling compares it, with a cheap read of a few columns per
 * turn, instead of reading the job's items. Undefined when the owner has no such job. The
 * console finds the owner first (`findJobOwner`), once per page, not once per poll.
 */
export async function jobChangeMark(
  db: Kysely<StoreSchema>,
  jobId: string,
  owner: string,
): Promise<string | undefined> {
  const job = await db
    .selectFrom("background_agent_jobs")
    .select(["status", "attempts", "updated_at"])
    .where("subject_uid", "=", owner)
    .where("id", "=", jobId)
    .executeTakeFirst();
  if (job === undefined) return undefined;
  const turns = await db
    .selectFrom("background_agent_job_turns")
    .select(["id", "status", "revision", "item_count", "updated_at"])
    .where("subject_uid", "=", owner)
    .where("job_id", "=", jobId)
    .orderBy("turn_index")
    .orderBy("attempt")
    .execute();
  return JSON.stringify([job, turns]);
}
