import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { GatewayMessageStore, GatewayMessage } from "../index.js";
import {
  renderRequest,
  streamRound,
  type RoundResult,
  type StreamEvent,
} from "verbatim-llm/providers";
import { ResponseLeases } from "../response-leases.js";
import { RESPONSES_CHAIN_SEED } from "../chain-matching.js";
import { MessageChain } from "../message-chains.js";
import type { Sanitizer } from "verbatim-llm/trajectory";
import { resolveUpstream, type UpstreamConfig } from "../upstream/config.js";
import { upstreamFailure } from "../upstream/failure.js";
import { upstreamErrorSanitizer } from "../upstream/scrub.js";
import { finishResponse, type StopCause } from "./finish.js";
import { PartialAnswer } from "./partial-answer.js";
import {
  callsOf,
  messageItemsWithImages,
  responseObject,
  withReasoning,
  type ResponseFacts,
} from "./convert.js";
import { contextMessage, inputToMessages } from "./input.js";
import { imageUrlsOf } from "./image-urls.js";
import { imageLookup, resolveInputImages } from "./input-images.js";
import { GatewayImageStore } from "../images.js";
import { modelContext, refuseUnsupportedState, resolveReferences } from "./request-context.js";
import { echoedSettings, providerSettings } from "./settings.js";
import { anchorOf } from "./state.js";
import { runUnkept } from "./unkept.js";
import { renderedTools } from "./tools.js";
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
 * lease (src/gateway/response-leases.ts), so one whose server died is ended by another.
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
    // Everything that can refuse the request runs before the upstream is called and before
    // anything is written: a refused request is neither billed nor stored.
    const { provider, upstream } = resolveUpstream(this.upstream, body.model);
    const anchor = await anchorOf(this.store, subject, body);
    const previousId = anchor.previousMessageId;
    const context =
      previousId === null ? undefined : await this.store.readContext(subject, previousId);
    if (context !== undefined && context.anchor.status === "in_progress") {
      throw new VerbatimError(
        "gateway_anchor_in_progress",
        `response ${context.anchor.id} is still in progress and cannot be continued yet`,
        {
          where: "body.previous_response_id",
          hint: "Continue from it once it has a final status; nothing was written",
        },
      );
    }
    refuseUnsupportedState(body);
    const contextHistory = (context?.messages ?? []).map(contextMessage);
    const references = await resolveReferences(this.store, subject, body.input);
    const images = await resolveInputImages(body.input, this.upstream.imageUrls);
    const inputs = inputToMessages(body.input, callsOf(contextHistory), references, images);
    const tools = renderedTools(body.tools, provider);
    const settings = providerSettings(provider, body);
    // Absent is absent (the provider's own limit), except at Anthropic, which requires one.
    const maxTokens =
      body.max_output_tokens ??
      (provider === "anthropic" ? this.upstream.defaultMaxOutputTokens : undefined);
    const { history, system, signed } = modelContext(body.instructions, [
      ...contextHistory,
      ...inputs,
    ]);
    const metadata = body.metadata ?? {};
    const echo = echoedSettings(body);
    const prepared = this.store.prepareAppend(subject, {
      previousMessageId: previousId,
      ...(anchor.conversationId === undefined ? {} : { conversationId: anchor.conversationId }),
      conversationMetadata: {},
      messages: [
        ...inputs.map((message) => ({
          role: message.role,
          content: message.content,
          metadata,
          ...(message.inputRole === undefined ? {} : { gateway: { inputRole: message.inputRole } }),
        })),
        {
          role: "assistant" as const,
          content: [],
          status: "in_progress" as const,
          metadata,
          gateway: { model: body.model, provider },
          // Given back when the response is read (GET /v1/responses/:id).
          request: {
            instructions: body.instructions ?? null,
            tools: body.tools ?? [],
            maxOutputTokens: body.max_output_tokens ?? null,
            echo,
          },
          leaseMilliseconds: this.leases.leaseMilliseconds,
        },
      ],
    });
    const rendered = renderRequest(provider, {
      history,
      images: await imageLookup(this.#images, subject, history, images),
      // Reasoning given back goes only to the provider that made it (A23).
      ...(provider === "openai-responses" && signed.length > 0 ? { signed } : {}),
      options: {
        model: body.model,
        ...(system === undefined ? {} : { system }),
        ...(tools.definitions.length === 0 ? {} : { tools: tools.definitions }),
        ...(tools.hosted.length === 0 ? {} : { hostedTools: tools.hosted }),
        ...(maxTokens === undefined ? {} : { maxTokens }),
        stream: true,
        ...(settings.promptCacheKey === undefined
          ? {}
          : { cache: { promptCacheKey: settings.promptCacheKey } }),
        ...(Object.keys(settings.extras).length === 0 ? {} : { extras: settings.extras }),
      },
    });
    // The upstream request starts first; the inputs and the in_progress answer are written once
    // the model's first event arrived (at once for a background response), its events are
    // passed on only once they are stored, and it is aborted when the write fails, when the
    // client hangs up or on a cancel.
    const abort = new AbortController();
    let stopped: StopCause | undefined;
    const stop = (cause: StopCause) => {
      stopped ??= cause;
      abort.abort();
    };
    const onClientGone = () => stop("client_disconnected");
    // A background response runs on whether its client stays or not (state.ts).
    const background = body.background === true;
    const clientGone = background ? undefined : options.clientGone;
    if (clientGone?.aborted === true) onClientGone();
    clientGone?.addEventListener("abort", onClientGone, { once: true });
    const events = streamRound(
      { provider, model: body.model, body: rendered.body, stream: true },
      {
        apiKey: upstream.apiKey,
        ...(upstream.baseUrl === undefined ? {} : { baseUrl: upstream.baseUrl }),
        env: {},
        timeoutMs: this.upstream.timeoutMs,
        maxRetries: this.upstream.maxRetries,
        signal: abort.signal,
      },
    );
    const first = events.next();
    first.catch(() => undefined);
    const facts: ResponseFacts = {
      previousResponseId: previousId,
      instructions: body.instructions ?? null,
      tools: body.tools,
      maxOutputTokens: body.max_output_tokens ?? null,
      echo,
    };
    if (body.store === false && this.upstream.keepUnstoredResponses === false) {
      try {
        return await runUnkept({
          events,
          first,
          model: body.model,
          provider,
          subject,
          facts,
          ...(sink === undefined ? {} : { sink }),
          failure: (error) => upstreamFailure(error, this.#sanitizer),
        });
      } finally {
        clientGone?.removeEventListener("abort", onClientGone);
      }
    }
    // Nothing is written before the model has answered (its first event): an upstream that
    // refuses or fails the request leaves no conversation and no row, so a client's retries
    // leave no debris (issue 17); the error is answered with the upstream's status. A
    // background response is written at once: its id is the answer, and GET polls it.
    try {
      if (!background) await first;
    } catch (error) {
      clientGone?.removeEventListener("abort", onClientGone);
      if (stopped !== undefined) throw error;
      throw upstreamFailure(error, this.#sanitizer);
    }
    // Without previous_response_id or conversation the client sent its whole history: the
    // longest stored prefix of it is continued (gateway/message-chains.ts).
    const chain =
      previousId === null && anchor.conversationId === undefined
        ? new MessageChain(this.store.database, subject, RESPONSES_CHAIN_SEED, inputs)
        : undefined;
    let stored: GatewayMessage[];
    try {
      await this.#images.save(subject, images.values());
      stored =
        chain === undefined
          ? await this.store.appendPrepared(prepared)
          : await this.store.appendPreparedMatching(prepared, chain);
    } catch (error) {
      clientGone?.removeEventListener("abort", onClientGone);
      abort.abort();
      await first.catch(() => undefined);
      throw error;
    }
    const output = stored[stored.length - 1];
    if (output === undefined) throw new Error("append returned no message");
    let markFinished = () => undefined as void;
    const finished = new Promise<void>((resolve) => (markFinished = resolve));
    this.#running.set(output.id, { subject, stop, finished });
    this.leases.hold(output.id, () => stop("lost"));
    const run = async (): Promise<ResponseObject> => {
      try {
        sink?.begin(responseObject(output, facts));
        const partial = new PartialAnswer();
        let result: RoundResult | undefined;
        let failure: VerbatimError | undefined;
        try {
          let next = await first;
          while (next.done !== true) {
            partial.add(next.value);
            sink?.event(next.value);
            next = await events.next();
          }
          result = next.value;
        } catch (error) {
          if (stopped === undefined) failure = upstreamFailure(error, this.#sanitizer);
        }
        const final = await finishResponse(
          this.store,
          subject,
          output,
          provider,
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
        return withReasoning(responseObject(final, facts), result, provider);
      } finally {
        clientGone?.removeEventListener("abort", onClientGone);
        this.leases.release(output.id);
        this.#running.delete(output.id);
        markFinished();
      }
    };
    if (!background) return run();
    // Its end is stored whatever it is (a failure included); the caller polls it.
    run().catch(() => undefined);
    return responseObject(output, facts);
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
