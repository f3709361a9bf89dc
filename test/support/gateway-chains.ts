import type {
  AppendMessageInput,
  GatewayMessageStore,
} from "../../packages/server/src/gateway/conversations/message-store.js";

/**
 * A chain's first user message (`userText`), then an in_progress message started after it
 * (an empty assistant message unless given): the set-up of lifecycle tests.
 */
export async function startAfterUser(
  store: GatewayMessageStore,
  subject: string,
  userText: string,
  message: Omit<AppendMessageInput, "status"> = { role: "assistant", content: [] },
) {
  const [user] = await store.appendMessages(subject, {
    previousMessageId: null,
    messages: [{ role: "user", content: [{ type: "text", text: userText }] }],
  });
  if (user === undefined) throw new Error("append returned no message");
  const started = await store.startMessage(subject, { previousMessageId: user.id, message });
  return { user, started };
}
