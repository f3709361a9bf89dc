import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { z } from "zod";
import type { GatewayMessage } from "../conversations/message-types.js";
import { requestSettingsFromRow } from "../conversations/rows.js";
import type { StoreDatabase } from "../../store/database.js";
import { findDeepestRequestRow } from "../../store/repositories/console-messages.js";

export const modelInputSchema = z.object({
  message_id: z.string().describe("The response whose request this was."),
  instructions: z.string().nullable(),
  tools: z.array(z.record(z.string(), z.unknown())),
  max_output_tokens: z.int().nullable(),
});
export type ModelInputReply = z.infer<typeof modelInputSchema>;

/** Responses looked up per read (each read is one statement over their ids). */
const CHUNK = 100;

/**
 * The request settings of the newest response of a context that has them. The responses are
 * looked up newest first, a chunk of ids per read of the settings column alone, with a turn
 * of the event loop between reads: a context of 500 responses read one full row at a time
 * blocked the event loop for 30–75 ms (issue 20).
 */
export async function modelInputOf(
  database: StoreDatabase,
  subject: string,
  context: readonly GatewayMessage[],
): Promise<ModelInputReply | null> {
  const responses: string[] = [];
  for (let index = context.length - 1; index >= 0; index--) {
    const message = context[index];
    if (message?.role === "assistant") responses.push(message.id);
  }
  for (let start = 0; start < responses.length; start += CHUNK) {
    if (start > 0) await yieldToEventLoop();
    const row = await findDeepestRequestRow(
      database.db,
      subject,
      responses.slice(start, start + CHUNK),
    );
    const settings = row === undefined ? null : requestSettingsFromRow(row);
    if (row === undefined || settings === null) continue;
    return {
      message_id: row.id,
      instructions: settings.instructions,
      tools: settings.tools.map((tool) => ({ ...tool })),
      max_output_tokens: settings.maxOutputTokens,
    };
  }
  return null;
}
