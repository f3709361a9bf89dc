import { VerbatimError } from "verbatim-llm/core";
import { renderRequest, type ProviderId } from "verbatim-llm/providers";
import type { GatewayMessageStore } from "../conversations/message-store.js";
import type { PreparedAppend } from "../conversations/prepare-append.js";
import type { GatewayImageStore } from "../conversations/images.js";
import { resolveUpstream, type UpstreamConfig, type UpstreamProvider } from "../upstream/config.js";
import { callsOf, type ResponseFacts } from "./convert.js";
import { contextMessage, inputToMessages, type InputImages, type NewMessage } from "./input.js";
import { imageLookup, resolveInputImages } from "./input-images.js";
import { modelContext, refuseUnsupportedState, resolveReferences } from "./request-context.js";
import { echoedSettings, providerSettings } from "./settings.js";
import { anchorOf, type Anchor } from "./state.js";
import { renderedTools } from "./tools.js";
import type { CreateResponseBody } from "./schemas.js";

/** What the Responses service needs of its surroundings to plan a response. */
export interface PlanContext {
  readonly store: GatewayMessageStore;
  readonly upstream: UpstreamConfig;
  readonly images: GatewayImageStore;
  readonly leaseMilliseconds: number;
  /** The id of the server renewing the response's lease (gateway/responses/leases.ts). */
  readonly leaseHolder: string;
}

/** A request to create a response, checked, in the store's terms and rendered for its model. */
export interface ResponsePlan {
  readonly provider: ProviderId;
  readonly upstream: UpstreamProvider;
  readonly anchor: Anchor;
  /** The input as new messages (what is stored before the answer). */
  readonly inputs: readonly NewMessage[];
  readonly images: InputImages;
  /** The inputs and the in_progress answer, checked for the store. */
  readonly prepared: PreparedAppend;
  /** The upstream request's body, as sent (its UTF-8 bytes, unchanged). */
  readonly body: string;
  /** What the response object echoes of the request. */
  readonly facts: ResponseFacts;
}

/**
 * Plans a response in named steps: everything that can refuse the request runs here, before the
 * upstream is called and before anything is written, so a refused request is neither billed nor
 * stored.
 */
export async function planResponse(
  context: PlanContext,
  subject: string,
  body: CreateResponseBody,
): Promise<ResponsePlan> {
  const { provider, upstream } = resolveUpstream(context.upstream, body.model);
  const anchor = await anchorOf(context.store, subject, body);
  const contextHistory = await continuableHistory(context.store, subject, anchor);
  refuseUnsupportedState(body);
  const references = await resolveReferences(context.store, subject, body.input);
  const images = await resolveInputImages(body.input, context.upstream.imageUrls);
  const inputs = inputToMessages(body.input, callsOf(contextHistory), references, images);
  const model = modelSettings(context, body, provider);
  const echo = echoedSettings(body);
  const prepared = prepareMessages(context, subject, body, provider, anchor, inputs, echo);
  const rendered = await renderForModel(context, subject, body, model, images, [
    ...contextHistory,
    ...inputs,
  ]);
  return {
    provider,
    upstream,
    anchor,
    inputs,
    images,
    prepared,
    body: rendered,
    facts: {
      previousResponseId: anchor.previousMessageId,
      instructions: body.instructions ?? null,
      tools: body.tools,
      maxOutputTokens: body.max_output_tokens ?? null,
      echo,
    },
  };
}

/** The stored context the response continues; refused while its anchor is still running. */
async function continuableHistory(
  store: GatewayMessageStore,
  subject: string,
  anchor: Anchor,
): Promise<NewMessage[]> {
  const previousId = anchor.previousMessageId;
  if (previousId === null) return [];
  const context = await store.readContext(subject, previousId);
  if (context.anchor.status === "in_progress") {
    throw new VerbatimError(
      "gateway_anchor_in_progress",
      `response ${context.anchor.id} is still in progress and cannot be continued yet`,
      {
        where: "body.previous_response_id",
        hint: "Continue from it once it has a final status; nothing was written",
      },
    );
  }
  return context.messages.map(contextMessage);
}

/** The inputs and the in_progress answer, checked as the store will write them. */
function prepareMessages(
  context: PlanContext,
  subject: string,
  body: CreateResponseBody,
  provider: ProviderId,
  anchor: Anchor,
  inputs: readonly NewMessage[],
  echo: ResponseFacts["echo"],
): PreparedAppend {
  const metadata = body.metadata ?? {};
  return context.store.prepareAppend(subject, {
    previousMessageId: anchor.previousMessageId,
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
        leaseMilliseconds: context.leaseMilliseconds,
        leaseHolder: context.leaseHolder,
      },
    ],
  });
}

/** The model's settings for the provider: its tools, cache key and extras, its output limit. */
interface ModelSettings {
  readonly provider: ProviderId;
  readonly tools: ReturnType<typeof renderedTools>;
  readonly settings: ReturnType<typeof providerSettings>;
  readonly maxTokens: number | undefined;
}

function modelSettings(
  context: PlanContext,
  body: CreateResponseBody,
  provider: ProviderId,
): ModelSettings {
  return {
    provider,
    tools: renderedTools(body.tools, provider),
    settings: providerSettings(provider, body),
    // Absent is absent (the provider's own limit), except at Anthropic, which requires one.
    maxTokens:
      body.max_output_tokens ??
      (provider === "anthropic" ? context.upstream.defaultMaxOutputTokens : undefined),
  };
}

/** The upstream request's body: the model context rendered for the provider, streamed. */
async function renderForModel(
  context: PlanContext,
  subject: string,
  body: CreateResponseBody,
  { provider, tools, settings, maxTokens }: ModelSettings,
  images: InputImages,
  messages: readonly NewMessage[],
): Promise<string> {
  const { history, system, signed } = modelContext(body.instructions, messages);
  const rendered = renderRequest(provider, {
    history,
    images: await imageLookup(context.images, subject, history, images),
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
  return rendered.body;
}
