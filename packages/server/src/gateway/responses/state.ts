import { VerbatimError } from "verbatim-llm/core";
import { GatewayConversations } from "../conversations/conversations.js";
import type { GatewayMessageStore } from "../index.js";
import { messageNotFound } from "../conversations/not-found.js";
import type { CreateResponseBody } from "./schemas.js";

/**
 * The state settings of a Responses request (docs/server/responses.md, "Conformance"):
 * - `conversation`: the response continues the conversation's newest message and is appended
 *   to it (its context is the conversation's current chain); not together with
 *   `previous_response_id`, as in OpenAI's API;
 * - `store: false`: the response is kept for the operator (console, recordings of stateless
 *   agents) but, as in OpenAI's API, the caller can neither read it back nor continue from it:
 *   such ids answer as missing ones (404);
 * - `background: true`: the response is stored at once and answered `in_progress`; it runs on
 *   whether its client stays or not, and `GET /v1/responses/:id` polls it (`cancel` stops it).
 *   Not with `stream: true` nor `store: false` (400).
 */
export interface Anchor {
  /** The message the response continues, or null to start a chain. */
  readonly previousMessageId: string | null;
  /** The conversation to append to (with `conversation`). */
  readonly conversationId?: string;
}

export async function anchorOf(
  store: GatewayMessageStore,
  subject: string,
  body: CreateResponseBody,
): Promise<Anchor> {
  if (body.background === true && body.stream === true) {
    throw new VerbatimError("invalid_request", "a background response cannot be streamed here", {
      where: "body.background",
      hint: "Send background: true without stream, and poll GET /v1/responses/:id; nothing was written",
    });
  }
  if (body.background === true && body.store === false) {
    throw new VerbatimError("invalid_request", "a background response must be stored", {
      where: "body.background",
      hint: "Leave store out (or true) with background: true: it is read back by polling; nothing was written",
    });
  }
  const conversation =
    typeof body.conversation === "string" ? body.conversation : body.conversation?.id;
  const previous = body.previous_response_id ?? null;
  if (conversation !== undefined && previous !== null) {
    throw new VerbatimError(
      "invalid_request",
      "previous_response_id and conversation cannot be used together",
      {
        where: "body.conversation",
        hint: "Send one of them: conversation continues that conversation's newest response; nothing was written",
      },
    );
  }
  if (conversation !== undefined) {
    const tip = await new GatewayConversations(store).tip(subject, conversation);
    if (tip !== null) await callerCanSee(store, subject, tip);
    return { previousMessageId: tip, conversationId: conversation };
  }
  if (previous !== null) await callerCanSee(store, subject, previous);
  return { previousMessageId: previous };
}

/** Refuses (404) a response stored with `store: false`: kept for the operator only. */
export async function callerCanSee(
  store: GatewayMessageStore,
  subject: string,
  id: string,
): Promise<void> {
  const { request } = await store.getMessageWithRequest(subject, id);
  if (request?.echo?.["store"] === false) throw messageNotFound(id);
}
