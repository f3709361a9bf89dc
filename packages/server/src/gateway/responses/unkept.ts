import type { VerbatimError } from "verbatim-llm/core";
import type { ProviderId, RoundResult, StreamEvent } from "verbatim-llm/providers";
import type { GatewayMessage } from "../index.js";
import { newId } from "../ids.js";
import { responseObject, withReasoning, type ResponseFacts } from "./convert.js";
import { storableBlocks } from "./repair.js";
import type { ResponseObject } from "./schemas.js";

/**
 * A `store: false` response when the operator turned keeping them off
 * (`VERBATIM_KEEP_UNSTORED_RESPONSES=off`, docs/server/responses.md): nothing is written, the answer is
 * built in memory from the upstream's events, under an id no row has (`msg_…`, never readable).
 */
export interface UnkeptRun {
  readonly events: AsyncGenerator<StreamEvent, RoundResult>;
  readonly first: Promise<IteratorResult<StreamEvent, RoundResult>>;
  readonly model: string;
  readonly provider: ProviderId;
  readonly subject: string;
  readonly facts: ResponseFacts;
  readonly sink?: {
    begin(response: ResponseObject): void;
    event(event: StreamEvent): void;
  };
  /** The upstream failure as the caller sees it. */
  readonly failure: (error: unknown) => VerbatimError;
}

export async function runUnkept(run: UnkeptRun): Promise<ResponseObject> {
  const now = new Date().toISOString();
  const base: GatewayMessage = {
    id: newId("msg"),
    subjectUid: run.subject,
    conversationId: newId("conv"),
    previousMessageId: run.facts.previousResponseId,
    type: "assistant",
    role: "assistant",
    status: "in_progress",
    content: [],
    metadata: { caller: {}, gateway: { model: run.model, provider: run.provider } },
    depth: 0,
    createdAt: now,
    updatedAt: now,
  };
  let next: IteratorResult<StreamEvent, RoundResult>;
  try {
    next = await run.first;
  } catch (error) {
    throw run.failure(error);
  }
  run.sink?.begin(responseObject(base, run.facts));
  try {
    while (next.done !== true) {
      run.sink?.event(next.value);
      next = await run.events.next();
    }
  } catch (error) {
    const failure = run.failure(error);
    if (run.sink === undefined) throw failure;
    return responseObject(
      {
        ...base,
        status: "failed",
        metadata: {
          ...base.metadata,
          gateway: {
            ...base.metadata.gateway,
            error: { code: failure.code, message: failure.message },
          },
        },
      },
      run.facts,
    );
  }
  const result = next.value;
  const response = responseObject(
    {
      ...base,
      status: result.stopReason === "max_tokens" ? "incomplete" : "completed",
      content: storableBlocks(result.message.content),
      metadata: {
        ...base.metadata,
        gateway: {
          model: result.model,
          provider: run.provider,
          usage: result.usage,
          stopReason: result.stopReason,
        },
      },
    },
    run.facts,
  );
  return withReasoning(response, result, run.provider);
}
