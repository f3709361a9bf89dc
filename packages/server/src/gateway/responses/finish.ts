import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { GatewayFacts, GatewayMessage, GatewayMessageStore } from "../index.js";
import type { Block } from "verbatim-llm/history";
import type { ProviderId, RoundResult } from "verbatim-llm/providers";
import type { Sanitizer } from "verbatim-llm/trajectory";
import { cutAtCodePoint, storableText, storableBlocks } from "./repair.js";

/**
 * How a started response ends (docs/server/responses.md, "Response lifecycle"): every response the server
 * started is finished `completed`, `incomplete`, `cancelled` or `failed`, whatever the upstream
 * sent. What cannot be stored as sent is repaired (lone surrogates → U+FFFD, texts cut at a code
 * point boundary to their limit); an answer the store still refuses (too large) ends the
 * response `failed` with the refusal as its reason.
 */

/** Why a response stopped before its upstream answer ended. */
export type StopCause = "cancelled" | "client_disconnected" | "lost";

/** The limits of the gateway facts (src/gateway/validation/checks.ts). */
const MODEL_MAX = 200;
const PROVIDER_RESPONSE_ID_MAX = 256;
const STOP_REASON_MAX = 64;
const ERROR_MESSAGE_MAX = 4000;

export interface Ending {
  /** The upstream's answer, when it arrived whole. */
  readonly result?: RoundResult;
  /** Why the answer stopped early (client gone, cancel), when it did. */
  readonly stopped?: StopCause;
  /** What streamed before it stopped. */
  readonly partial: readonly Block[];
  /** The upstream's failure (already scrubbed), when it failed. */
  readonly failure?: VerbatimError;
}

/** A finish the store refused for its content (not for the database being unreachable). */
function isRefusal(error: unknown): error is VerbatimError {
  return (
    isVerbatimError(error) &&
    (error.code === "gateway_input_invalid" ||
      error.code === "gateway_content_too_large" ||
      error.code === "gateway_metadata_invalid")
  );
}

function answerFacts(result: RoundResult, provider: ProviderId): GatewayFacts {
  return {
    model: cutAtCodePoint(result.model, MODEL_MAX),
    provider,
    ...(result.responseId === undefined
      ? {}
      : { providerResponseId: cutAtCodePoint(result.responseId, PROVIDER_RESPONSE_ID_MAX) }),
    usage: result.usage,
    stopReason: cutAtCodePoint(result.stopReason, STOP_REASON_MAX),
  };
}

/** The error facts a failed response keeps: a code and a well-formed, scrubbed message. */
export function errorFacts(error: VerbatimError, sanitizer: Sanitizer): GatewayFacts {
  return {
    error: {
      code: cutAtCodePoint(error.code, 100),
      message: cutAtCodePoint(
        sanitizer.sanitizeText(storableText(error.message)).value,
        ERROR_MESSAGE_MAX,
      ),
    },
  };
}

/**
 * Finishes a started response; returns the stored message, or the message as another server
 * or a cancel left it when it was finished meanwhile.
 */
export async function finishResponse(
  store: GatewayMessageStore,
  subject: string,
  output: GatewayMessage,
  provider: ProviderId,
  ending: Ending,
  sanitizer: Sanitizer,
): Promise<GatewayMessage> {
  const finish = async (input: Parameters<GatewayMessageStore["finishMessage"]>[2]) => {
    try {
      return await store.finishMessage(subject, output.id, input);
    } catch (error) {
      if (isVerbatimError(error) && error.code === "gateway_message_not_in_progress") {
        return store.getMessage(subject, output.id);
      }
      throw error;
    }
  };
  try {
    if (ending.result !== undefined) {
      const { result } = ending;
      return await finish({
        status: result.stopReason === "max_tokens" ? "incomplete" : "completed",
        content: storableBlocks(result.message.content),
        gateway: answerFacts(result, provider),
      });
    }
    if (ending.stopped !== undefined) {
      if (ending.stopped === "lost") return await store.getMessage(subject, output.id);
      return await finish({
        status: ending.stopped === "cancelled" ? "cancelled" : "incomplete",
        content: storableBlocks(ending.partial),
        gateway: { stopReason: ending.stopped },
      });
    }
    const failure = ending.failure ?? new VerbatimError("upstream_failed", "the upstream failed");
    return await finish({ status: "failed", gateway: errorFacts(failure, sanitizer) });
  } catch (error) {
    if (!isRefusal(error)) throw error;
    // The store refused what the upstream sent even repaired: the response fails with the
    // refusal as its reason, and its content stays as written at the start (empty).
    return finish({
      status: "failed",
      gateway: errorFacts(
        new VerbatimError(
          "upstream_failed",
          `the upstream's answer could not be stored: ${error.message}`,
        ),
        sanitizer,
      ),
    });
  }
}
