import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { GatewayMessageStore, GatewayMessage } from "../index.js";
import type { RoundResult, StreamEvent } from "verbatim-llm/providers";
import { ResponseLeases } from "./leases.js";
import { RESPONSES_CHAIN_SEED } from "../recording/chain-matching.js";
import { MessageChain } from "../conversations/message-chains.js";
import type { Sanitizer } from "verbatim-llm/trajectory";
import type { UpstreamConfig } from "../upstream/config.js";
import { upstreamFailure } from "../upstream/failure.js";
import { upstreamErrorSanitizer } from "../upstream/scrub.js";
import { finishResponse, type StopCause } from "./finish.js";
import { PartialAnswer } from "./partial-answer.js";
import { messageItemsWithImages, responseObject, withReasoning } from "./convert.js";
import { imageUrlsOf } from "./image-urls.js";
import { GatewayImageStore } from "../conversations/images.js";
import { planResponse, type ResponsePlan } from "./plan.js";
import { runUnkept } from "./unkept.js";
import { UpstreamCall } from "./upstream-call.js";
import type { CreateResponseBody, ResponseItem, ResponseObject } from "./schemas.js";

/** Receives a response's events while it streams (POST /v1/responses with stream: true). */
export interface ResponseSink {
  begin(response: ResponseObject): void;
  event(event: StreamEvent): void;
}

/** What a request to create a response brings besides its body. */
export interface CreateOptions {
  /** Receives the events of a streamed response. */
  readonly sink?: ResponseSink;
  /** Aborted when the client hangs up: the upstream call stops, the response ends incomplete. */
  readonly clientGone?: AbortSignal;
}

/** A response this server is answering now. */
interface Running {
  readonly subject: string;
  stop(cause: StopCause): void;
  /** Settles once the response is finished (stored). */
  readonly finished: Promise<unknown>;
}

/**
 * The stateful Responses API over the gateway store: every input and output message is stored
 * in ai_gateway_messages; the model sees the model-visible context of previous_response_id
 * rendered for the upstream provider through src/providers. Every response it starts ends
 * `completed`, `incomplete`, `cancelled` or `failed` (finish.ts); while it runs it holds a
 * lease (src/gateway/responses/leases.ts), so one whose server died is ended by another.
 */
export class ResponsesService {
  readonly leases: ResponseLeases;
  readonly #sanitizer: Sanitizer;
  readonly #images: GatewayImageStore;
  readonly #running = new Map<string, Running>();

  constructor(
    private readonly store: GatewayMessageStore,
    private readonly upstream: UpstreamConfig,
  ) {
    this.leases = new ResponseLeases(
      store.database,
      upstream.responseLeaseMs === undefined ? {} : { leaseMilliseconds: upstream.responseLeaseMs },
    );
    this.#sanitizer = upstreamErrorSanitizer(upstream);
    this.#images = new GatewayImageStore(store.database);
  }

  async create(
    subject: string,
    body: CreateResponseBody,
    options: CreateOptions = {},
  ): Promise<ResponseObject> {
    const { sink } = options;
    const plan = await planResponse(
      {
        store: this.store,
        upstream: this.upstream,
        images: this.#images,
        leaseMilliseconds: this.leases.leaseMilliseconds,
        leaseHolder: this.leases.holder,
      },
      subject,
      body,
    );
    // The upstream request starts first; the inputs and the in_progress answer are written once
    // the model's first event arrived (at once for a background response), its events are
    // passed on only once they are stored, and it is aborted when the write fails, when the
    // client hangs up or on a cancel. A background response runs on whether its client stays
    // or not (state.ts).
    const background = body.background === true;
    const call = new UpstreamCall(
      this.upstream,
      plan,
      body.model,
      background ? undefined : options.clientGone,
    );
    if (body.store === false && this.upstream.keepUnstoredResponses === false) {
      try {
        return await runUnkept({
          events: call.events,
          first: call.first,
          model: body.model,
          provider: plan.provider,
          subject,
          facts: plan.facts,
          ...(sink === undefined ? {} : { sink }),
          failure: (error) => upstreamFailure(error, this.#sanitizer),
        });
      } finally {
        call.detach();
      }
    }
    if (!background) await this.#modelAnswered(call);
    const { output, chain } = await this.#storeStart(subject, plan, call);
    let markFinished = () => undefined as void;
    const finished = new Promise<void>((resolve) => (markFinished = resolve));
    this.#running.set(output.id, { subject, stop: (cause) => call.stop(cause), finished });
    this.leases.hold(subject, output.id, () => call.stop("lost"));
    const run = async (): Promise<ResponseObject> => {
      try {
        return await this.#streamToEnd(subject, plan, call, output, chain, sink);
      } finally {
        call.detach();
        this.leases.release(output.id);
        this.#running.delete(output.id);
        markFinished();
      }
    };
    if (!background) return run();
    // Its end is stored whatever it is (a failure included); the caller polls it.
    run().catch(() => undefined);
    return responseObject(output, plan.facts);
  }

  /**
   * Waits for the model's first event. Nothing is written before the model has answered: an
   * upstream that refuses or fails the request leaves no conversation and no row, so a client's
   * retries leave no debris (issue 17); the error is answered with the upstream's status. A
   * background response is written at once: its id is the answer, and GET polls it.
   */
  async #modelAnswered(call: UpstreamCall): Promise<void> {
    try {
      await call.first;
    } catch (error) {
      call.detach();
      if (call.stopped !== undefined) throw error;
      throw upstreamFailure(error, this.#sanitizer);
    }
  }

  /**
   * Writes the input's images, the inputs and the in_progress answer. Without
   * previous_response_id or conversation the client sent its whole history: the longest stored
   * prefix of it is continued (gateway/conversations/message-chains.ts). A failed write aborts the call.
   */
  async #storeStart(
    subject: string,
    plan: ResponsePlan,
    call: UpstreamCall,
  ): Promise<{ output: GatewayMessage; chain: MessageChain | undefined }> {
    const chain =
      plan.anchor.previousMessageId === null && plan.anchor.conversationId === undefined
        ? new MessageChain(this.store.database, subject, RESPONSES_CHAIN_SEED, plan.inputs)
        : undefined;
    let stored: GatewayMessage[];
    try {
      await this.#images.save(subject, plan.images.values());
      stored =
        chain === undefined
          ? await this.store.appendPrepared(plan.prepared)
          : await this.store.appendPreparedMatching(plan.prepared, chain);
    } catch (error) {
      call.detach();
      call.abort();
      await call.first.catch(() => undefined);
      throw error;
    }
    const output = stored[stored.length - 1];
    if (output === undefined) throw new Error("append returned no message");
    return { output, chain };
  }

  /** Passes the model's events on to the sink, then stores how the response ended. */
  async #streamToEnd(
    subject: string,
    plan: ResponsePlan,
    call: UpstreamCall,
    output: GatewayMessage,
    chain: MessageChain | undefined,
    sink: ResponseSink | undefined,
  ): Promise<ResponseObject> {
    sink?.begin(responseObject(output, plan.facts));
    const partial = new PartialAnswer();
    let result: RoundResult | undefined;
    let failure: VerbatimError | undefined;
    try {
      let next = await call.first;
      while (next.done !== true) {
        partial.add(next.value);
        sink?.event(next.value);
        next = await call.events.next();
      }
      result = next.value;
    } catch (error) {
      if (call.stopped === undefined) failure = upstreamFailure(error, this.#sanitizer);
    }
    const stopped = call.stopped;
    const final = await finishResponse(
      this.store,
      subject,
      output,
      plan.provider,
      {
        ...(result === undefined ? {} : { result }),
        ...(result === undefined && stopped !== undefined ? { stopped } : {}),
        ...(failure === undefined ? {} : { failure }),
        partial: partial.blocks(),
      },
      this.#sanitizer,
    );
    await chain?.answered(final);
    if (final.status === "failed" && sink === undefined) {
      // The plain client learns of the failure as an error, and that the inputs and the
      // failed response were stored.
      const error = final.metadata.gateway.error;
      throw new VerbatimError(
        failure?.code ?? "upstream_failed",
        error?.message ?? "the upstream request failed",
        {
          where: output.id,
          hint: `The input and the failed response ${output.id} were stored (GET /v1/responses/${output.id}); retry by continuing from the same previous_response_id`,
        },
      );
    }
    return withReasoning(responseObject(final, plan.facts), result, plan.provider);
  }

  /**
   * Cancels a response (POST /v1/responses/:id/cancel, as OpenAI's): one this server answers
   * stops its upstream call and ends `cancelled` with what arrived; one in progress on another
   * server ends `cancelled` here (that server stops its call when it next renews its lease); a
   * finished one is returned as it is.
   */
  async cancel(subject: string, id: string): Promise<ResponseObject> {
    const { message } = await this.#response(subject, id);
    if (message.status === "in_progress") {
      const running = this.#running.get(message.id);
      if (running !== undefined && running.subject === subject) {
        running.stop("cancelled");
        await running.finished;
      } else {
        try {
          await this.store.finishMessage(subject, message.id, {
            status: "cancelled",
            gateway: { stopReason: "cancelled" },
          });
        } catch (error) {
          if (!isVerbatimError(error) || error.code !== "gateway_message_not_in_progress") {
            throw error;
          }
        }
      }
    }
    return this.get(subject, id);
  }

  /** The messages a stored response took as input, and the anchor it continued. */
  async #inputsOf(
    subject: string,
    output: GatewayMessage,
  ): Promise<{
    readonly inputs: GatewayMessage[];
    readonly previousResponseId: string | null;
  }> {
    const { messages } = await this.store.readContext(subject, output.id);
    const inputs: GatewayMessage[] = [];
    let index = messages.length - 2;
    for (; index >= 0; index--) {
      const message = messages[index];
      if (message === undefined) break;
      const isResponse =
        message.type === "assistant" && message.metadata.gateway.model !== undefined;
      if (isResponse || message.type === "summary") break;
      inputs.unshift(message);
    }
    const previous = index >= 0 ? messages[index] : undefined;
    return { inputs, previousResponseId: previous?.id ?? null };
  }

  async get(subject: string, id: string): Promise<ResponseObject> {
    // The settings are null for summaries and for responses stored before they were kept.
    const { message: output, request } = await this.#response(subject, id);
    const { previousResponseId } = await this.#inputsOf(subject, output);
    return responseObject(output, {
      previousResponseId,
      instructions: request?.instructions ?? null,
      tools: (request?.tools ?? []) as CreateResponseBody["tools"],
      maxOutputTokens: request?.maxOutputTokens ?? null,
      echo: request?.echo,
    });
  }

  async inputItems(subject: string, id: string): Promise<ResponseItem[]> {
    const { message: output } = await this.#response(subject, id);
    const { inputs } = await this.#inputsOf(subject, output);
    const images = await imageUrlsOf(this.store, subject, inputs);
    return inputs.flatMap((message) => messageItemsWithImages(message, images));
  }

  /** A stored response (an assistant message or a summary) and its request settings. */
  async #response(subject: string, id: string) {
    const response = await this.store.getMessageWithRequest(subject, id);
    const { message, request } = response;
    // A response stored with store: false is kept for the operator only (state.ts).
    if (
      (message.type !== "assistant" && message.type !== "summary") ||
      request?.echo?.["store"] === false
    ) {
      throw new VerbatimError("resource_not_found", `no response ${id}`, {
        where: id,
        hint: "Response ids are the ids POST /v1/responses returned (or a summary's id)",
      });
    }
    return response;
  }
}
