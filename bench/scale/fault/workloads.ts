/**
 * What the fault test's client does, each an endless loop until `stopped()`, spread over the
 * servers by FaultClient: chained Responses sessions (streamed and not), recorded `/v1/messages`
 * sessions whose history grows by a turn each call, and jobs whose turns get items appended.
 * What the servers acknowledged is written to the ledger the checks read.
 */
import { FaultClient, pause, serverSentEvents, type AnswerReading } from "./client.js";

export const FAULT_MODEL = "claude-fault-test";

export interface AcknowledgedResponse {
  readonly session: string;
  readonly turn: number;
  readonly operation: string;
  readonly attemptId: string;
  readonly id: string;
  readonly previousId: string | undefined;
  readonly streamed: boolean;
}

export interface AcknowledgedCall {
  readonly subject: string;
  readonly session: string;
  readonly turn: number;
  readonly operation: string;
  readonly attemptId: string;
  readonly streamed: boolean;
}

export interface AcknowledgedJob {
  readonly operation: string;
  readonly id: string;
}

export interface AcknowledgedItem {
  readonly turnId: string;
  readonly key: string;
  readonly position: number;
}

export interface Ledger {
  readonly responses: AcknowledgedResponse[];
  readonly calls: AcknowledgedCall[];
  readonly jobs: AcknowledgedJob[];
  readonly items: AcknowledgedItem[];
}

export interface Worker {
  readonly client: FaultClient;
  readonly ledger: Ledger;
  /** A number in [0, 1), from the run's seed. */
  readonly random: () => number;
  readonly stopped: () => boolean;
  /** The subject's API key. */
  readonly key: string;
  /** Names this worker's operations (unique in the run). */
  readonly label: string;
}

const RESPONSE_TURNS = 8;
const CALL_TURNS = 12;
const ITEMS_PER_TURN = 12;

/** A short random pause between two operations of a worker, so the load stays bounded. */
const breathe = (worker: Worker) => pause(10 + Math.floor(worker.random() * 40));

async function jsonOf(response: Response): Promise<any> {
  return JSON.parse(await response.text()) as unknown;
}

async function readResponse(response: Response, streamed: boolean): Promise<AnswerReading<string>> {
  if (!streamed) {
    const body = await jsonOf(response);
    return body.status === "completed" && typeof body.id === "string"
      ? { value: body.id as string }
      : { retry: `status ${String(body.status)}` };
  }
  const completed = serverSentEvents(await response.text()).find(
    ([name]) => name === "response.completed",
  );
  const id = (completed?.[1] as { response?: { id?: unknown } } | undefined)?.response?.id;
  return typeof id === "string" ? { value: id } : { retry: "the stream ended before its end" };
}

/** Chained Responses sessions: each turn continues the previous acknowledged response. */
export async function responsesWorker(worker: Worker): Promise<void> {
  for (let session = 1; !worker.stopped(); session++) {
    const sessionName = `${worker.label}-s${session}`;
    let previousId: string | undefined;
    for (let turn = 1; turn <= RESPONSE_TURNS && !worker.stopped(); turn++) {
      const operation = `${sessionName}-t${turn}`;
      const streamed = worker.random() < 0.5;
      const acknowledged = await worker.client.send(
        "responses",
        operation,
        (attemptId) => ({
          path: "/v1/responses",
          headers: { authorization: `Bearer ${worker.key}` },
          body: {
            model: FAULT_MODEL,
            // The attempt's own text: a repeated first turn must not match the stored input of
            // a lost attempt (docs/server/recorded-calls.md, "Matching on /v1/responses").
            input: `${attemptId}: tell me something`,
            stream: streamed,
            metadata: { fault_operation: operation, fault_attempt: attemptId },
            ...(previousId === undefined ? {} : { previous_response_id: previousId }),
          },
        }),
        (response) => readResponse(response, streamed),
      );
      if (acknowledged === undefined) break;
      worker.ledger.responses.push({
        session: sessionName,
        turn,
        operation,
        attemptId: acknowledged.attemptId,
        id: acknowledged.value,
        previousId,
        streamed,
      });
      previousId = acknowledged.value;
      await breathe(worker);
    }
  }
}

async function readMessage(response: Response, streamed: boolean): Promise<AnswerReading<string>> {
  if (!streamed) {
    const body = await jsonOf(response);
    const text = body.content?.[0]?.text;
    return typeof text === "string" ? { value: text } : { retry: "no text" };
  }
  const events = serverSentEvents(await response.text());
  if (!events.some(([name]) => name === "message_stop")) return { retry: "cut before its end" };
  const text = events
    .map(([, data]) => (data as { delta?: { text?: unknown } } | undefined)?.delta?.text)
    .filter((part): part is string => typeof part === "string")
    .join("");
  return { value: text };
}

/** Recorded `/v1/messages` sessions: each call sends the whole history, one turn longer. */
export async function recordedSessionWorker(worker: Worker, subject: string): Promise<void> {
  for (let session = 1; !worker.stopped(); session++) {
    const sessionName = `${worker.label}-s${session}`;
    const messages: { role: "user" | "assistant"; content: string }[] = [];
    for (let turn = 1; turn <= CALL_TURNS && !worker.stopped(); turn++) {
      const operation = `${sessionName}-t${turn}`;
      const streamed = worker.random() < 0.5;
      messages.push({ role: "user", content: `${operation}: go on` });
      const body = { model: FAULT_MODEL, max_tokens: 64, stream: streamed, messages };
      const acknowledged = await worker.client.send(
        "recorded calls",
        operation,
        () => ({
          path: "/v1/messages",
          headers: { "x-api-key": worker.key, "anthropic-version": "2023-06-01" },
          body,
        }),
        (response) => readMessage(response, streamed),
      );
      if (acknowledged === undefined) break;
      messages.push({ role: "assistant", content: acknowledged.value });
      worker.ledger.calls.push({
        subject,
        session: sessionName,
        turn,
        operation,
        attemptId: acknowledged.attemptId,
        streamed,
      });
      await breathe(worker);
    }
  }
}

const readJson = async (response: Response): Promise<AnswerReading<any>> => ({
  value: await jsonOf(response),
});

/**
 * Jobs: a conversation, a job in it, its attempt and a turn, then items appended a few at a
 * time under item keys (a repeated append is idempotent), then the turn and the job finished.
 */
export async function jobWorker(worker: Worker): Promise<void> {
  const auth = { authorization: `Bearer ${worker.key}` };
  const post = (kind: string, operation: string, path: string, body: unknown) =>
    worker.client.send(kind, operation, () => ({ path, headers: auth, body }), readJson);
  const jobState = async (jobId: string) =>
    (
      await worker.client.send(
        "job reads",
        `${jobId}-read`,
        () => ({ path: `/v1/background-agent-jobs/${jobId}`, headers: auth, method: "GET" }),
        readJson,
      )
    )?.value;
  for (let round = 1; !worker.stopped(); round++) {
    const operation = `${worker.label}-j${round}`;
    const conversation = await post("job steps", `${operation}-c`, "/v1/conversations", {
      items: [{ role: "user", content: `${operation}: run the job` }],
    });
    if (conversation === undefined) break;
    const job = await worker.client.send(
      "jobs",
      operation,
      (attemptId) => ({
        path: "/v1/background-agent-jobs",
        headers: auth,
        // A creation retried after a lost answer gives back the job the first one made.
        body: {
          conversation_id: conversation.value.id,
          metadata: { fault_operation: operation, fault_attempt: attemptId },
          idempotency_key: operation,
        },
      }),
      readJson,
    );
    if (job === undefined) break;
    const jobId = job.value.id as string;
    worker.ledger.jobs.push({ operation, id: jobId });
    // A repeated start after a lost answer is refused (the job runs already): read the job.
    const started = await worker.client.send(
      "job steps",
      `${operation}-attempt`,
      () => ({ path: `/v1/background-agent-jobs/${jobId}/attempts`, headers: auth, body: {} }),
      readJson,
      async (status) =>
        status === 409 && (await jobState(jobId))?.job?.status === "running" ? {} : undefined,
    );
    if (started === undefined) break;
    const turn = await post(
      "job steps",
      `${operation}-turn`,
      `/v1/background-agent-jobs/${jobId}/turns`,
      {
        items: [],
      },
    );
    if (turn === undefined) break;
    const turnId = turn.value.turn.id as string;
    for (let next = 0; next < ITEMS_PER_TURN && !worker.stopped();) {
      const size = 1 + Math.floor(worker.random() * 3);
      const items = Array.from({ length: size }, (_, index) => ({
        item_key: `item:${next + index}`,
        item: { type: "agent_message", text: `${operation} item ${next + index}` },
      }));
      const appended = await post(
        "job items",
        `${operation}-i${next}`,
        `/v1/background-agent-job-turns/${turnId}/items`,
        { items },
      );
      if (appended === undefined) return;
      for (const row of appended.value.items as { item_key: string; position: number }[]) {
        worker.ledger.items.push({ turnId, key: row.item_key, position: row.position });
      }
      next += size;
      await breathe(worker);
    }
    const finishAgain = async (status: number) => (status === 409 ? {} : undefined);
    await worker.client.send(
      "job steps",
      `${operation}-turn-finish`,
      () => ({
        path: `/v1/background-agent-job-turns/${turnId}/finish`,
        headers: auth,
        body: { status: "completed" },
      }),
      readJson,
      finishAgain,
    );
    await worker.client.send(
      "job steps",
      `${operation}-finish`,
      () => ({
        path: `/v1/background-agent-jobs/${jobId}/finish`,
        headers: auth,
        body: { status: "succeeded", result: { items: ITEMS_PER_TURN } },
      }),
      readJson,
      finishAgain,
    );
  }
}
