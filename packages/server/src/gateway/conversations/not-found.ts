import { VerbatimError } from "verbatim-llm/core";

/**
 * The errors for what a subject cannot see. A message or conversation of another subject gets
 * exactly the same error as one that does not exist: nothing tells them apart (no leak).
 */
export function messageNotFound(messageId: string, conversationId?: string): VerbatimError {
  return new VerbatimError(
    "gateway_message_not_found",
    conversationId === undefined
      ? `no message ${messageId}`
      : `no message ${messageId} in conversation ${conversationId}`,
    { where: messageId, hint: "Check the id and the subject the request is made as" },
  );
}

export function conversationNotFound(conversationId: string): VerbatimError {
  return new VerbatimError("gateway_conversation_not_found", `no conversation ${conversationId}`, {
    where: conversationId,
    hint: "Check the id and the subject the request is made as",
  });
}
