import type { GatewayMessageStore, Summarizer, SummaryRequest, SummaryResult } from "../index.js";
import { GatewayImageStore } from "../conversations/images.js";
import { imageLookup } from "./input-images.js";
import { renderRequest, sendRound } from "verbatim-llm/providers";
import { resolveUpstream, type UpstreamConfig } from "../upstream/config.js";
import { upstreamFailure } from "../upstream/failure.js";
import { upstreamErrorSanitizer } from "../upstream/scrub.js";
import type { ImageBytesLookup, Message } from "verbatim-llm/history";
import { modelVisibleHistory } from "./model-context.js";

export const SUMMARY_INSTRUCTIONS =
  "You compress conversations. Write a summary of the conversation so far that lets it continue without the original messages: the user's goals, decisions, facts and results established, open questions and the next steps. Write only the summary.";

const SUMMARY_REQUEST = "Summarise the conversation so far, as instructed.";

/**
 * A Summarizer that makes one model call through src/providers, to the configured upstream,
 * showing it the context's images; its failure is scrubbed as a response's is (docs/server/responses.md, "What an upstream error shows").
 */
function providerSummarizer(
  config: UpstreamConfig,
  model: string,
  /** The bytes of the images the context shows (the subject's kept images). */
  images: (messages: readonly Message[]) => Promise<ImageBytesLookup> = async () => () => undefined,
): Summarizer {
  const { provider, upstream } = resolveUpstream(config, model);
  const sanitizer = upstreamErrorSanitizer(config);
  return {
    async summarize(request: SummaryRequest): Promise<SummaryResult> {
      const { history } = modelVisibleHistory([
        ...request.messages,
        { role: "user", content: [{ type: "text", text: SUMMARY_REQUEST }] },
      ]);
      const rendered = renderRequest(provider, {
        history,
        images: await images(history),
        options: {
          model,
          system: SUMMARY_INSTRUCTIONS,
          maxTokens: config.defaultMaxOutputTokens,
          stream: false,
        },
      });
      const result = await sendRound(
        { provider, model, body: rendered.body, stream: false },
        {
          apiKey: upstream.apiKey,
          ...(upstream.baseUrl === undefined ? {} : { baseUrl: upstream.baseUrl }),
          env: {},
          timeoutMs: config.timeoutMs,
          maxRetries: config.maxRetries,
          ...(request.signal === undefined ? {} : { signal: request.signal }),
        },
      ).catch((error: unknown) => {
        throw upstreamFailure(error, sanitizer);
      });
      const text = result.message.content
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("");
      return {
        text,
        model: result.model,
        provider,
        ...(result.responseId === undefined ? {} : { providerResponseId: result.responseId }),
        usage: result.usage,
      };
    },
  };
}

/**
 * The summarizer of POST /v1/responses/:id/compress with `model`: one call to the model that
 * serves it, shown the images of the context from the subject's kept images.
 */
export function subjectSummarizer(
  store: GatewayMessageStore,
  config: UpstreamConfig,
  subject: string,
  model: string,
): Summarizer {
  const images = new GatewayImageStore(store.database);
  return providerSummarizer(config, model, (messages) =>
    imageLookup(images, subject, messages, new Map()),
  );
}
