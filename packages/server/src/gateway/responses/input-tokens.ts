import { VerbatimError } from "verbatim-llm/core";
import { renderRequest, type ProviderId } from "verbatim-llm/providers";
import { PROVIDER_ENDPOINTS, requestHeaders } from "verbatim-llm/internal";
import { z } from "zod";
import type { GatewayConversations } from "../conversations/conversations.js";
import { GatewayImageStore } from "../conversations/images.js";
import type { GatewayMessage, GatewayMessageStore } from "../index.js";
import { callsOf, inputToMessages } from "./convert.js";
import { contextMessage } from "./input.js";
import type { InputImages, NewMessage, ReferenceLookup } from "./input.js";
import { imageLookup, resolveInputImages } from "./input-images.js";
import type { ImageBytesLookup } from "verbatim-llm/history";
import { modelContext, resolveReferences } from "./request-context.js";
import { createResponseBodySchema } from "./schemas.js";
import { toolDefinitions } from "./tools.js";
import { resolveUpstream, type UpstreamConfig } from "../upstream/config.js";

/**
 * POST /v1/responses/input_tokens: what the input of a response would cost in input tokens.
 * The settings that change only the answer are taken and do not change the count.
 */
export const inputTokensBodySchema = z
  .object({
    model: z.string().min(1).max(200).describe("Required here: it picks the upstream that counts."),
    input: createResponseBodySchema.shape.input.optional(),
    instructions: z.string().max(262_144).nullish(),
    tools: createResponseBodySchema.shape.tools,
    previous_response_id: z.string().min(1).max(200).nullish(),
    conversation: z
      .union([z.string().min(1).max(200), z.object({ id: z.string().min(1).max(200) })])
      .nullish(),
    tool_choice: z.unknown().optional(),
    parallel_tool_calls: z.boolean().nullish(),
    reasoning: z.unknown().optional(),
    text: z.unknown().optional(),
    truncation: z.enum(["auto", "disabled"]).nullish(),
  })
  .describe(
    "POST /v1/responses/input_tokens: the input, instructions and tools of a response to count.",
  );
export type InputTokensBody = z.infer<typeof inputTokensBodySchema>;

export const inputTokensReplySchema = z.object({
  object: z.literal("response.input_tokens"),
  input_tokens: z.int(),
  verbatim_count: z
    .enum(["upstream", "estimate"])
    .describe(
      "verbatim: `upstream` when the provider counted (Anthropic count_tokens, OpenAI input_tokens), `estimate` otherwise (UTF-8 bytes of the rendered request / 4, rounded up).",
    ),
});
export type InputTokensReply = z.infer<typeof inputTokensReplySchema>;

/** Where each provider counts the tokens of a request, and how its body is cut down for it. */
const COUNT_ENDPOINTS: Partial<
  Record<ProviderId, { readonly path: string; readonly keep: readonly string[] }>
> = {
  anthropic: {
    path: "/v1/messages/count_tokens",
    keep: ["model", "messages", "system", "tools", "tool_choice", "thinking"],
  },
  "openai-responses": {
    path: "/responses/input_tokens",
    keep: ["model", "input", "instructions", "tools", "tool_choice", "reasoning", "text"],
  },
};

/** What counting the input tokens of a response reads and calls. */
export interface InputTokenCounting {
  readonly store: GatewayMessageStore;
  /** A deleted response or conversation is not found. */
  readonly conversations: GatewayConversations;
  readonly upstream: UpstreamConfig;
}

/**
 * POST /v1/responses/input_tokens for a subject: the context of previous_response_id or of the
 * conversation (one the subject deleted is not found), the input's item references and images
 * resolved as a response's are, then counted (countInputTokens). Nothing is written.
 */
export async function responseInputTokens(
  { store, conversations, upstream }: InputTokenCounting,
  subject: string,
  body: InputTokensBody,
): Promise<InputTokensReply> {
  let context: readonly GatewayMessage[] = [];
  if (typeof body.previous_response_id === "string") {
    await conversations.checkResponseVisible(subject, body.previous_response_id);
    context = (await store.readContext(subject, body.previous_response_id)).messages;
  } else {
    const conversation =
      typeof body.conversation === "string" ? body.conversation : body.conversation?.id;
    if (conversation !== undefined) {
      context = (await conversations.chain(subject, conversation, () => [])).messages;
    }
  }
  const references =
    body.input === undefined ? new Map() : await resolveReferences(store, subject, body.input);
  const inputImages =
    body.input === undefined ? new Map() : await resolveInputImages(body.input, upstream.imageUrls);
  const images = await imageLookup(
    new GatewayImageStore(store.database),
    subject,
    context,
    inputImages,
  );
  return countInputTokens(upstream, body, context.map(contextMessage), references, {
    input: inputImages,
    lookup: images,
  });
}

/**
 * Counts the input tokens of a request: the upstream that would answer it counts them where it
 * has a count endpoint; elsewhere a documented estimate. The request is rendered as a response
 * of it would be (system and developer input, instructions, tools); `context` is what the model
 * would see before the input (previous_response_id or the conversation).
 */
export async function countInputTokens(
  config: UpstreamConfig,
  body: InputTokensBody,
  context: readonly NewMessage[],
  references: ReferenceLookup,
  /** The input's images as read, and the bytes of every image the model would be shown. */
  images: { readonly input: InputImages; readonly lookup: ImageBytesLookup } = {
    input: new Map(),
    lookup: () => undefined,
  },
): Promise<InputTokensReply> {
  const { provider, upstream } = resolveUpstream(config, body.model);
  const inputs =
    body.input === undefined
      ? []
      : inputToMessages(body.input, callsOf(context), references, images.input);
  const { history, system } = modelContext(body.instructions, [...context, ...inputs]);
  const tools = toolDefinitions(body.tools);
  const rendered = renderRequest(provider, {
    history,
    images: images.lookup,
    options: {
      model: body.model,
      ...(system === undefined ? {} : { system }),
      ...(tools.length === 0 ? {} : { tools }),
      // Anthropic's renderer needs a limit; count_tokens does not take it (cut below).
      ...(provider === "anthropic" ? { maxTokens: config.defaultMaxOutputTokens } : {}),
      stream: false,
    },
  });
  const renderedBody = JSON.parse(rendered.body) as Record<string, unknown>;
  const endpoint = COUNT_ENDPOINTS[provider];
  if (endpoint === undefined) {
    const bytes = Buffer.byteLength(rendered.body, "utf8");
    return {
      object: "response.input_tokens",
      input_tokens: Math.ceil(bytes / 4),
      verbatim_count: "estimate",
    };
  }
  const countBody = Object.fromEntries(
    Object.entries(renderedBody).filter(([key]) => endpoint.keep.includes(key)),
  );
  const base = (upstream.baseUrl ?? PROVIDER_ENDPOINTS[provider].defaultBaseUrl).replace(
    /\/+$/,
    "",
  );
  let answer: Response;
  try {
    answer = await fetch(`${base}${endpoint.path}`, {
      method: "POST",
      headers: requestHeaders(provider, upstream.apiKey),
      body: JSON.stringify(countBody),
      signal: AbortSignal.timeout(config.timeoutMs),
    });
  } catch (error) {
    throw new VerbatimError(
      "upstream_failed",
      `counting tokens at ${provider} failed: ${error instanceof Error ? error.message : String(error)}`,
      { where: "body.model", hint: "Retry; nothing was written" },
    );
  }
  const text = await answer.text();
  const parsed = answer.ok ? parseCount(text) : undefined;
  if (parsed === undefined) {
    throw new VerbatimError(
      "upstream_failed",
      `counting tokens at ${provider} answered ${answer.status}${answer.ok ? " without input_tokens" : ""}`,
      { where: "body.model", hint: "Check the model name and the request; nothing was written" },
    );
  }
  return { object: "response.input_tokens", input_tokens: parsed, verbatim_count: "upstream" };
}

function parseCount(text: string): number | undefined {
  try {
    const value = (JSON.parse(text) as { input_tokens?: unknown }).input_tokens;
    return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
  } catch {
    return undefined;
  }
}
