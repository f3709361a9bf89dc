/**
 * The fault test's checks, read from the database once the load stopped and the servers had
 * the time to end and place what the killed ones left: every acknowledged response, recorded
 * call and job item stored exactly once; no response left `in_progress`; every recorded call
 * placed once in its chain, in order. Each check returns its verdict and, when it fails, the
 * first few problems it found and how many there were.
 */
import { sql } from "kysely";
import type { StoreDatabase } from "../../../packages/server/src/store/database.js";
import type { Ledger } from "./workloads.js";

export interface Verdict {
  readonly name: string;
  readonly passed: boolean;
  /** What was checked, in numbers. */
  readonly detail: string;
  /** The first problems found (at most 10), and their count. */
  readonly problems: readonly string[];
  readonly problemCount: number;
}

export function verdict(name: string, detail: string, problems: string[]): Verdict {
  return {
    name,
    passed: problems.length === 0,
    detail,
    problems: problems.slice(0, 10),
    problemCount: problems.length,
  };
}

const callerField = (metadata: string, field: string): string | undefined => {
  const parsed = JSON.parse(metadata) as { caller?: Record<string, string> };
  return parsed.caller?.[field];
};

const countBy = <T>(values: readonly T[], key: (value: T) => string) => {
  const counts = new Map<string, T[]>();
  for (const value of values) {
    const name = key(value);
    counts.set(name, [...(counts.get(name) ?? []), value]);
  }
  return counts;
};

export interface MessageRow {
  readonly id: string;
  readonly conversation_id: string;
  readonly previous_message_id: string | null;
  readonly role: string;
  readonly status: string;
  readonly content: string;
  readonly metadata: string;
  readonly depth: number;
}

export async function messageRows(database: StoreDatabase): Promise<MessageRow[]> {
  return database.db
    .selectFrom("ai_gateway_messages")
    .select([
      "id",
      "conversation_id",
      "previous_message_id",
      "role",
      "status",
      "content",
      "metadata",
      "depth",
    ])
    .execute();
}

/** Each acknowledged response: its answer and its input stored once, chained after its anchor. */
export function checkResponses(ledger: Ledger, messages: readonly MessageRow[]): Verdict {
  const problems: string[] = [];
  const byAttempt = countBy(
    messages.filter((row) => callerField(row.metadata, "fault_attempt") !== undefined),
    (row) => callerField(row.metadata, "fault_attempt") ?? "",
  );
  const byId = new Map(messages.map((row) => [row.id, row]));
  for (const acknowledged of ledger.responses) {
    const rows = byAttempt.get(acknowledged.attemptId) ?? [];
    const answer = rows.find((row) => row.id === acknowledged.id);
    const input = rows.find((row) => row.role === "user");
    if (rows.length !== 2 || answer === undefined || input === undefined) {
      problems.push(
        `${acknowledged.operation}: ${rows.length} rows of attempt ${acknowledged.attemptId} (${rows.map((row) => row.role).join(", ")}), answer ${acknowledged.id} ${answer === undefined ? "missing" : "found"}`,
      );
      continue;
    }
    if (answer.status !== "completed") {
      problems.push(`${acknowledged.id} (${acknowledged.operation}) is ${answer.status}`);
    }
    if (answer.previous_message_id !== input.id) {
      problems.push(`${acknowledged.id} does not follow its input ${input.id}`);
    }
    if (input.previous_message_id !== (acknowledged.previousId ?? null)) {
      problems.push(
        `the input of ${acknowledged.id} follows ${input.previous_message_id}, not ${acknowledged.previousId ?? "nothing"}`,
      );
    }
    if (byId.get(acknowledged.id) !== answer) problems.push(`${acknowledged.id} read twice`);
  }
  const attempts = new Set(ledger.responses.map((response) => response.attemptId));
  const others = [...byAttempt.keys()].filter((attempt) => !attempts.has(attempt)).length;
  return verdict(
    "every acknowledged response stored once, chained after its anchor",
    `${ledger.responses.length} acknowledged; ${others} attempts not acknowledged left rows too`,
    problems,
  );
}

/** No response is left in_progress, and what ended how. */
export function checkEnded(messages: readonly MessageRow[]): Verdict {
  const statuses = countBy(
    messages.filter((row) => row.role === "assistant"),
    (row) => row.status,
  );
  const inProgress = statuses.get("in_progress") ?? [];
  const detail = [...statuses.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, rows]) => `${status} ${rows.length}`)
    .join(", ");
  return verdict(
    "every started response ended (none in_progress)",
    `answers: ${detail}`,
    inProgress.map((row) => `${row.id} is still in_progress`),
  );
}

export interface CallRow {
  readonly id: string;
  readonly conversation_id: string;
  readonly previous_call_id: string | null;
  readonly message_count: number;
  readonly attemptId: string;
  readonly operation: string;
}

export async function recordedCallRows(database: StoreDatabase): Promise<CallRow[]> {
  const rows = await database.db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["id", "conversation_id", "previous_call_id", "message_count", "request_headers"])
    .execute();
  return rows.map((row) => {
    const headers = JSON.parse(row.request_headers) as Record<string, string>;
    const attemptId = headers["x-request-id"] ?? "";
    return { ...row, attemptId, operation: attemptId.replace(/\.a\d+$/, "") };
  });
}

/** Unplaced recorded calls (their bytes kept, their place in a chain not yet written). */
export async function unplacedCalls(database: StoreDatabase): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    select count(*) as n from ai_gateway_recorded_calls where conversation_id = ''`.execute(
    database.db,
  );
  return Number(rows[0]?.n ?? 0);
}

/** Responses in_progress now. */
export async function inProgressResponses(database: StoreDatabase): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    select count(*) as n from ai_gateway_messages where status = 'in_progress'`.execute(
    database.db,
  );
  return Number(rows[0]?.n ?? 0);
}

/** Each acknowledged call recorded once and placed once in its session's chain, in order. */
export function checkRecordedCalls(
  ledger: Ledger,
  calls: readonly CallRow[],
  messages: readonly MessageRow[],
): { stored: Verdict; placed: Verdict } {
  const stored: string[] = [];
  const placed: string[] = [];
  const byAttempt = countBy(calls, (row) => row.attemptId);
  const byOperation = countBy(calls, (row) => row.operation);
  const byId = new Map(calls.map((row) => [row.id, row]));
  const byConversation = countBy(messages, (row) => row.conversation_id);
  for (const row of calls) {
    if (row.conversation_id === "") placed.push(`call ${row.id} (${row.attemptId}) is not placed`);
  }
  for (const [session, acknowledged] of countBy(ledger.calls, (call) => call.session)) {
    const conversations = new Set(
      acknowledged
        .flatMap((call) => byOperation.get(call.operation) ?? [])
        .map((row) => row.conversation_id),
    );
    if (conversations.size !== 1) {
      placed.push(
        `session ${session} is in ${conversations.size} conversations: ${[...conversations].join(", ")}`,
      );
    }
    const conversation = byConversation.get([...conversations][0] ?? "") ?? [];
    for (const call of acknowledged) {
      const rows = byAttempt.get(call.attemptId) ?? [];
      const row = rows[0];
      if (rows.length !== 1 || row === undefined) {
        stored.push(
          `${call.operation}: ${rows.length} recorded calls of attempt ${call.attemptId}`,
        );
        continue;
      }
      if (row.message_count !== 2 * call.turn - 1) {
        stored.push(
          `${row.id} (${call.operation}) holds ${row.message_count} messages, not ${2 * call.turn - 1}`,
        );
      }
      // The call it extends: the previous turn's, or a lost attempt of its own request that was
      // recorded before it (the deepest stored call on its prefix, docs/server/recorded-calls.md).
      const previous = row.previous_call_id === null ? undefined : byId.get(row.previous_call_id);
      const expectedPrevious = call.turn === 1 ? undefined : `${session}-t${call.turn - 1}`;
      if (previous?.operation !== expectedPrevious && previous?.operation !== call.operation) {
        placed.push(
          `${row.id} (${call.operation}) follows ${previous === undefined ? "no call" : `${previous.id} (${previous.operation})`}, not ${expectedPrevious ?? "no call"}`,
        );
      }
      // Its new message once, at its depth; the answer of each recorded attempt once, after it.
      const attempts = byOperation.get(call.operation)?.length ?? 0;
      const mine = conversation.filter((message) => message.content.includes(`${call.operation}:`));
      const user = mine.filter((message) => message.role === "user");
      const answers = mine.filter((message) => message.role === "assistant");
      if (user.length !== 1 || answers.length !== attempts) {
        placed.push(
          `${call.operation}: ${user.length} user and ${answers.length} assistant messages in its conversation, for ${attempts} recorded attempts`,
        );
      } else if (
        user[0]?.depth !== 2 * (call.turn - 1) ||
        answers.some(
          (answer) =>
            answer.depth !== 2 * call.turn - 1 || answer.previous_message_id !== user[0]?.id,
        )
      ) {
        placed.push(
          `${call.operation}: its messages are at depths ${user[0]?.depth} and ${answers.map((answer) => answer.depth).join(",")}, not ${2 * (call.turn - 1)} and ${2 * call.turn - 1} one after the other`,
        );
      }
    }
  }
  const acknowledgedAttempts = new Set(ledger.calls.map((call) => call.attemptId));
  const others = calls.filter((row) => !acknowledgedAttempts.has(row.attemptId)).length;
  return {
    stored: verdict(
      "every acknowledged recorded call stored once",
      `${ledger.calls.length} acknowledged; ${calls.length} rows (${others} of attempts not acknowledged)`,
      stored,
    ),
    placed: verdict(
      "every recorded call placed once in its chain, in order",
      `${calls.length} calls, ${new Set(ledger.calls.map((call) => call.session)).size} sessions`,
      placed,
    ),
  };
}

/** Each acknowledged job stored, each acknowledged item once at its position, no gaps. */
export async function checkJobs(database: StoreDatabase, ledger: Ledger): Promise<Verdict> {
  const problems: string[] = [];
  const rows = await database.db
    .selectFrom("background_agent_jobs")
    .select(["id", "metadata"])
    .execute();
  const jobs = new Set(rows.map((row) => row.id));
  // Job creations carry an idempotency key: one job per operation, however often it was sent.
  const perOperation = countBy(rows, (row) => {
    const parsed = JSON.parse(row.metadata) as Record<string, unknown> & {
      caller?: Record<string, unknown>;
    };
    return String(parsed["fault_operation"] ?? parsed.caller?.["fault_operation"] ?? "");
  });
  for (const job of ledger.jobs) {
    if (!jobs.has(job.id)) problems.push(`job ${job.id} (${job.operation}) is missing`);
    const made = perOperation.get(job.operation)?.length ?? 0;
    if (made !== 1) problems.push(`${job.operation} made ${made} jobs`);
  }
  const turnIds = [...new Set(ledger.items.map((item) => item.turnId))];
  const items =
    turnIds.length === 0
      ? []
      : await database.db
          .selectFrom("background_agent_job_turn_items")
          .select(["turn_id", "item_key", "position"])
          .where("turn_id", "in", turnIds)
          .execute();
  const byKey = countBy(items, (row) => `${row.turn_id} ${row.item_key}`);
  for (const item of ledger.items) {
    const rows = byKey.get(`${item.turnId} ${item.key}`) ?? [];
    if (rows.length !== 1) problems.push(`${item.turnId} ${item.key}: ${rows.length} rows`);
    else if (rows[0]?.position !== item.position) {
      problems.push(
        `${item.turnId} ${item.key} is at ${rows[0]?.position}, acknowledged at ${item.position}`,
      );
    }
  }
  for (const [turnId, rows] of countBy(items, (row) => row.turn_id)) {
    const positions = rows.map((row) => row.position).sort((a, b) => a - b);
    if (positions.some((position, index) => position !== index)) {
      problems.push(`turn ${turnId} holds positions ${positions.join(",")}`);
    }
  }
  return verdict(
    "every acknowledged job and item stored once, items in order",
    `${ledger.jobs.length} jobs and ${ledger.items.length} items acknowledged; ${jobs.size} jobs and ${items.length} items of those turns stored`,
    problems,
  );
}
