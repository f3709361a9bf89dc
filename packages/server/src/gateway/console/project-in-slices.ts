import { z } from "zod";
import type { ChatMLMessage } from "verbatim-llm/history";
import {
  modelVisibleTrajectory,
  projectGatewayMessagesToChatML,
  type ChatMLTrajectory,
  type ChatMLTurnSpan,
  type ProjectedMessages,
} from "verbatim-llm/trajectory";
import type { GatewayMessage } from "../conversations/message-types.js";
import { inSlices, mapInSlices } from "./slices.js";
import { storedMessageReply } from "./stored-message.js";

export type ConsoleView = "stored" | "chatml" | "model-visible";

/** A projected page's metadata as the console answers it. */
export const projectionMetadataSchema = z.object({
  redacted: z.boolean(),
  content_truncated: z.boolean(),
});

/**
 * The ChatML projection of a page's messages, message by message in slices: the same
 * trajectory as one call of `projectGatewayMessagesToChatML` (a turn starts at each user
 * message, so a message's first turn continues the previous one unless it starts with one).
 */
export async function chatMLInSlices(
  messages: readonly Pick<GatewayMessage, "role" | "content">[],
): Promise<ChatMLTrajectory> {
  const projected: ChatMLMessage[] = [];
  const turns: ChatMLTurnSpan[] = [];
  await inSlices(messages.length, (index) => {
    const message = messages[index];
    if (message === undefined) return;
    const one = projectGatewayMessagesToChatML([{ role: message.role, content: message.content }]);
    const [first, ...rest] = one.turns;
    const last = turns[turns.length - 1];
    if (first !== undefined && last !== undefined && one.messages[0]?.role !== "user") {
      turns[turns.length - 1] = { message_count: last.message_count + first.message_count };
      turns.push(...rest);
    } else {
      turns.push(...one.turns);
    }
    projected.push(...one.messages);
  });
  return { messages: projected, metadata: { redacted: false, content_truncated: false }, turns };
}

/**
 * The model-visible projection turn by turn in slices: the same as `modelVisibleTrajectory`
 * (tool-call aliases are local to a turn, so each turn is rebuilt on its own).
 */
export async function modelVisibleInSlices(
  trajectory: ChatMLTrajectory,
): Promise<ProjectedMessages> {
  const messages: ChatMLMessage[] = [];
  const starts: number[] = [];
  let start = 0;
  for (const turn of trajectory.turns) {
    starts.push(start);
    start += turn.message_count;
  }
  await inSlices(trajectory.turns.length, (index) => {
    const turn = trajectory.turns[index] as ChatMLTurnSpan;
    const first = starts[index] ?? 0;
    const one = modelVisibleTrajectory({
      messages: trajectory.messages.slice(first, first + turn.message_count),
      metadata: trajectory.metadata,
      turns: [turn],
    });
    messages.push(...one.messages);
  });
  return {
    messages,
    metadata: {
      redacted: trajectory.metadata.redacted === true,
      content_truncated: trajectory.metadata.content_truncated === true,
    },
  };
}

/** A page's messages in one of the console's views, projected in slices. */
export async function projectInSlices(
  view: ConsoleView,
  selected: readonly GatewayMessage[],
): Promise<ProjectedMessages> {
  if (view === "stored") {
    return {
      messages: (await mapInSlices(selected, storedMessageReply)) as unknown as ChatMLMessage[],
      metadata: { redacted: false, content_truncated: false },
    };
  }
  const chatml = await chatMLInSlices(selected);
  return view === "chatml"
    ? { messages: chatml.messages, metadata: chatml.metadata }
    : modelVisibleInSlices(chatml);
}
