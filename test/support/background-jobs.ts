// Shared set-up of the background agent job tests (src/gateway/jobs).
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import type { TurnItemInput } from "../../packages/server/src/gateway/jobs/job-types.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { uniqueName } from "./databases.js";

export const say = (key: string, text: string): TurnItemInput => ({
  item_key: key,
  item: { type: "agent_message", text },
});

/** A subject with a conversation (holding one exchange) and a running job reporting to it. */
export async function setup(database: StoreDatabase, retryBudget = 0) {
  const subject = uniqueName("subject");
  const gateway = new GatewayMessageStore(database);
  const [, answer] = await gateway.appendMessages(subject, {
    previousMessageId: null,
    messages: [
      { role: "user", content: [{ type: "text", text: "Research v2 in the background." }] },
      { role: "assistant", content: [{ type: "text", text: "Started a job." }] },
    ],
  });
  const jobs = new BackgroundAgentJobs(database);
  const job = await jobs.createJob(subject, {
    conversationId: answer?.conversationId ?? "",
    retryBudget,
  });
  await jobs.startAttempt(subject, job.id);
  return { subject, gateway, jobs, job, anchor: answer?.id ?? "" };
}
