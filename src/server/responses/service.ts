import { isVerbatimError, VerbatimError } from "../../core/errors.js";
import type { GatewayMessageStore, GatewayMessage } from "../../gateway/index.js";
import type { Message } from "../../history/message.js";
import {
  renderRequest,
  streamRound,
  type RoundResult,
  type StreamEvent,
  type ToolDefinition,
} from "../../providers/index.js";
import { resolveUpstream, type UpstreamConfig } from "../upstream/config.js";
import {
  callsOf,
  inputToMessages,
  messageToItems,
  responseObject,
  type ResponseFacts,
} from "./convert.js";
import { modelVisibleHistory } from "./model-context.js";
import type { CreateResponseBody, ResponseItem, ResponseObject } from "./schemas.js";

/** Receives a response's events while it streams (POST /v1/responses with stream: true). */
export interface ResponseSink {
  begin(response: ResponseObject): void;
  event(event: StreamEvent): void;
}

const toMessage = (message: GatewayMessage): Message => ({
  role: message.role,
  content: message.content,
});

function upstreamError(error: unknown): VerbatimError {
  if (isVerbatimError(error)) {
    if (error.code === "provider_api_key_missing") {
      return new VerbatimError("upstream_not_configured", error.message, {
        hint: "Set the provider's API key in the server's environment (docs/server.md)",
      });
    }
    if (error.code === "provider_timeout") {
      return new VerbatimError("upstream_timeout", error.message, {
        ...(error.hint === undefined ? {} : { hint: error.hint }),
        cause: error,
      });
    }
    if (error.code.startsWith("provider_")) {
      return new VerbatimError("upstream_failed", error.message, {
        ...(error.hint === undefined ? {} : { hint: error.hint }),
        cause: error,
      });
    }
    return error;
  }
  return new VerbatimError(
    "upstream_failed",
    `the upstream request failed: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}

function toolDefinitions(tools: CreateResponseBody["tools"]): ToolDefinition[] {
  return (tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description ?? "",
    inputSchema: (tool.parameters ?? {
      type: "object",
      properties: {},
    }) as ToolDefinition["inputSchema"],
  }));
}

/**
 * The stateful Responses API over the gateway store: every input and output message is stored
 * in ai_gateway_messages; the model sees the model-visible context of previous_response_id
 * rendered for the upstream provider through src/providers.
 */
export class ResponsesService {
  constructor(
    private readonly store: GatewayMessageStore,
    private readonly upstream: UpstreamConfig,
  ) {}

  async create(
    subject: string,
    body: CreateResponseBody,
    sink?: ResponseSink,
  ): Promise<ResponseObject> {
    // Everything that can refuse the request runs before anything is written.
    const { provider, upstream } = resolveUpstream(this.upstream, body.model);
    const previousId = body.previous_response_id ?? null;
    const context =
      previousId === null ? [] : (await this.store.readContext(subject, previousId)).messages;
    const contextHistory = context.map(toMessage);
    const inputs = inputToMessages(body.input, callsOf(contextHistory));
    const maxTokens = body.max_output_tokens ?? this.upstream.defaultMaxOutputTokens;
    const stream = sink !== undefined;
    const { history } = modelVisibleHistory([...contextHistory, ...inputs]);
    const rendered = renderRequest(provider, {
      history,
      images: () => undefined,
      options: {
        model: body.model,
        ...(body.instructions === undefined || body.instructions === null
          ? {}
          : { system: body.instructions }),
        ...(body.tools === undefined || body.tools.length === 0
          ? {}
          : { tools: toolDefinitions(body.tools) }),
        maxTokens,
        stream: true,
      },
    });
    const metadata = body.metadata ?? {};
    // The upstream request starts while the inputs and the in_progress answer are written (one
    // durable commit off the critical path); its events are read only once they are stored,
    // and it is aborted when the write fails.
    const abort = new AbortController();
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
    let stored: GatewayMessage[];
    try {
      // One turn of the event loop first, so the upstream request is on the wire before the
      // write: SQLite's commit holds the thread while it syncs, and the upstream works
      // meanwhile instead of after.
      await new Promise((resolve) => setImmediate(resolve));
      stored = await this.store.appendMessages(subject, {
        previousMessageId: previousId,
        conversationMetadata: {},
        messages: [
          ...inputs.map((message) => ({ role: message.role, content: message.content, metadata })),
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
            },
          },
        ],
      });
    } catch (error) {
      abort.abort();
      await first.catch(() => undefined);
      throw error;
    }
    const output = stored[stored.length - 1];
    if (output === undefined) throw new Error("append returned no message");
    const facts: ResponseFacts = {
      previousResponseId: previousId,
      instructions: body.instructions ?? null,
      tools: body.tools,
      maxOutputTokens: body.max_output_tokens ?? null,
    };
    sink?.begin(responseObject(output, facts));
    let result: RoundResult;
    try {
      let next = await first;
      while (next.done !== true) {
        if (stream) sink.event(next.value);
        next = await events.next();
      }
      result = next.value;
    } catch (error) {
      const failure = upstreamError(error);
      await this.store.finishMessage(subject, output.id, {
        status: "failed",
        gateway: { error: { code: failure.code, message: failure.message.slice(0, 4000) } },
      });
      throw failure;
    }
    const finished = await this.store.finishMessage(subject, output.id, {
      status: result.stopReason === "max_tokens" ? "incomplete" : "completed",
      content: result.message.content,
      gateway: {
        model: result.model,
        provider,
        ...(result.responseId === undefined ? {} : { providerResponseId: result.responseId }),
        usage: result.usage,
        stopReason: result.stopReason,
      },
    });
    return responseObject(finished, facts);
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
    });
  }

  async inputItems(subject: string, id: string): Promise<ResponseItem[]> {
    const { message: output } = await this.#response(subject, id);
    const { inputs } = await this.#inputsOf(subject, output);
    return inputs.flatMap(messageToItems);
  }

  /** A stored response (an assistant message or a summary) and its request settings. */
  async #response(subject: string, id: string) {
    const response = await this.store.getMessageWithRequest(subject, id);
    const { message } = response;
    if (message.type !== "assistant" && message.type !== "summary") {
      throw new VerbatimError("resource_not_found", `no response ${id}`, {
        where: id,
        hint: "Response ids are the ids POST /v1/responses returned (or a summary's id)",
      });
    }
    return response;
  }
}
