import type { ErrorCodeDefinition } from "verbatim-llm/core";
import { registerErrorCodes } from "verbatim-llm/internal";
// The store's codes come with the gateway's: whoever answers the gateway's errors answers them.
import "../store/error-codes.js";

/**
 * The error codes the gateway layer raises (docs/errors.md, group "gateway"). Add a code here, then
 * run `npm run docs:generate`. Importing this module registers them (the entry point does).
 */
export const gatewayCodes = [
  {
    code: "gateway_input_invalid",
    httpStatus: 400,
    meaning:
      "A gateway write is not of the expected shape: a wrong type, an unknown key, a message whose content is not blocks of the message model, an empty subject or key.",
    remedy:
      "Read the message for the field (a path such as messages[1].content[0].text) and send a valid value.",
  },
  {
    code: "gateway_content_too_large",
    httpStatus: 413,
    meaning:
      "A message's content, or the number of messages in one write, is over the store's limit.",
    remedy:
      "Send smaller content (compress the conversation, or split the write); the limits are in docs/store.md.",
  },
  {
    code: "gateway_metadata_invalid",
    httpStatus: 400,
    meaning:
      "Caller metadata is not a small map of string pairs (at most 16 keys of up to 64 characters, values of up to 512), or gateway facts hold an unknown key: metadata never carries a list of items.",
    remedy:
      "Send metadata as a flat object of short strings; put messages in the messages, not in metadata.",
  },
  {
    code: "gateway_conversation_not_found",
    httpStatus: 404,
    meaning: "No conversation with this id exists for this subject.",
    remedy: "Check the conversation id, and that the request is made as the subject that owns it.",
  },
  {
    code: "gateway_message_not_found",
    httpStatus: 404,
    meaning: "No message with this id exists for this subject (or in this conversation).",
    remedy:
      "Check the message id (previous_response_id), and that the request is made as the subject that owns it.",
  },
  {
    code: "gateway_anchor_in_progress",
    httpStatus: 409,
    meaning:
      "The anchor message is still in progress: a chain cannot continue from a message not yet finished.",
    remedy:
      "Wait until the message is completed, failed, incomplete or cancelled, then continue from it.",
  },
  {
    code: "gateway_message_not_in_progress",
    httpStatus: 409,
    meaning:
      "The message is already finished; only an in_progress message takes its final status and content.",
    remedy: "Read the message to see its final state; a finished message never changes.",
  },
  {
    code: "gateway_idempotency_key_reused",
    httpStatus: 409,
    meaning: "The idempotency key was already used for a different request by this subject.",
    remedy: "Use a new key for a new request; repeat a key only to retry the very same request.",
  },
  {
    code: "gateway_summary_failed",
    httpStatus: 502,
    meaning:
      "The model call that writes a compression summary failed or returned no text; nothing was written.",
    remedy:
      "Retry the compression, pass the summary yourself, or check the provider's status and credentials.",
  },
  {
    code: "job_not_found",
    httpStatus: 404,
    meaning: "No background agent job (or job turn) with this id exists for this subject.",
    remedy: "Check the id, and that the request is made as the subject that owns the job.",
  },
  {
    code: "job_state_conflict",
    httpStatus: 409,
    meaning:
      "The job or turn is not in a state that allows this change: a turn of a job that is not running, items appended to a finished turn, a job that already ended.",
    remedy:
      "Read the job to see its state; start an attempt or a new turn first, or steer the turn.",
  },
  {
    code: "job_retry_budget_exhausted",
    httpStatus: 409,
    meaning: "The job has used every attempt its retry budget allows (retry budget + 1).",
    remedy: "Create a new job with a larger retry budget if the work must be tried again.",
  },
  {
    code: "store_row_invalid",
    httpStatus: 500,
    meaning:
      "A stored row does not have the shape verbatim writes: it was changed outside verbatim.",
    remedy: "Restore the row from a backup; the message names the table and the row.",
  },
  {
    code: "trajectory_row_invalid",
    httpStatus: 400,
    meaning:
      "A stored trajectory row (or an item to append) does not match the row or item schema of docs/trajectories.md.",
    remedy: "Fix the reported field (the line number is given for JSON Lines input).",
  },
  {
    code: "trajectory_item_key_conflict",
    httpStatus: 409,
    meaning:
      "An item was appended with an item key the turn already holds for a different item; stored items are never rewritten.",
    remedy:
      "Use a new item key for a new item; repeat a key only to retry the same append (then it is idempotent).",
  },
  {
    code: "upstream_not_configured",
    httpStatus: 503,
    meaning: "No upstream model provider is configured for the requested model.",
    remedy:
      "Set ANTHROPIC_API_KEY or OPENAI_API_KEY (and optionally ANTHROPIC_BASE_URL / OPENAI_BASE_URL) in the server's environment, or map the model with VERBATIM_MODEL_PROVIDERS (docs/server/README.md).",
  },
  {
    code: "upstream_failed",
    httpStatus: 502,
    meaning: "The upstream model provider answered with an error or an unreadable response.",
    remedy:
      "Read the message for the provider's status and error; retry, or check the provider's key and model.",
  },
  {
    code: "upstream_invalid_request",
    httpStatus: 400,
    meaning:
      "The upstream model provider refused the request as invalid (its HTTP 400 or 422), before it answered.",
    remedy:
      "Read the message for the provider's reason and change the request; retrying it unchanged fails the same way.",
  },
  {
    code: "upstream_model_not_found",
    httpStatus: 404,
    meaning:
      "The upstream model provider answered HTTP 404: it does not know the model (or the route).",
    remedy: "Check the model name, and the provider VERBATIM_MODEL_PROVIDERS routes it to.",
  },
  {
    code: "upstream_request_too_large",
    httpStatus: 413,
    meaning: "The upstream model provider refused the request as too large (its HTTP 413).",
    remedy: "Send a shorter input or context (compress the conversation, docs/server/README.md).",
  },
  {
    code: "upstream_rate_limited",
    httpStatus: 429,
    meaning:
      "The upstream model provider kept answering HTTP 429 (rate limited) after the server's retries.",
    remedy: "Retry later, or raise the provider account's limits.",
  },
  {
    code: "upstream_timeout",
    httpStatus: 504,
    meaning: "The upstream model provider did not answer in time.",
    remedy: "Retry later, or raise VERBATIM_UPSTREAM_TIMEOUT_MS on the server.",
  },
  {
    code: "console_worker_failed",
    httpStatus: 503,
    meaning:
      "The console's worker thread, which builds the console's message and job pages, stopped while building this page, and again in the thread started to retry it.",
    remedy:
      "Retry the request (a new thread starts with it); the server log has the thread's error.",
  },
  {
    code: "console_page_timeout",
    httpStatus: 503,
    meaning:
      "The console's worker thread did not finish building this page within its time (30 s): the thread was stopped and the page not built.",
    remedy:
      "Retry the request (a new thread starts with it); if the same page times out again, report it with the server log, which names the page.",
  },
  {
    code: "api_key_not_found",
    httpStatus: 404,
    meaning: "The API key given to `verbatim keys revoke` is not stored in this database.",
    remedy: "Check the key and the --db it was created in.",
  },
] as const satisfies readonly ErrorCodeDefinition[];

declare module "verbatim-llm/core" {
  interface ErrorCodeGroups {
    readonly gateway: typeof gatewayCodes;
  }
}

registerErrorCodes("gateway", gatewayCodes);
