import type { FastifyReply } from "fastify";
import { z } from "zod";
import type { ResponseObject } from "../../gateway/responses/schemas.js";

/** GET /v1/responses/:id query: `stream=true` replays the stored response as events. */
export const retrieveResponseQuerySchema = z.object({
  stream: z
    .enum(["true", "false"])
    .transform((value) => value === "true")
    .optional()
    .describe("true: the stored response's events as server-sent events (a replay)."),
  starting_after: z.coerce
    .number()
    .int()
    .min(-1)
    .optional()
    .describe("With stream=true: only the events after this sequence_number."),
  include: z.union([z.string(), z.array(z.string())]).optional(),
  include_obfuscation: z.string().optional(),
});

interface ReplayEvent {
  readonly type: string;
  readonly payload: Record<string, unknown>;
}

const FINAL_EVENTS: Readonly<Record<ResponseObject["status"], string>> = {
  completed: "response.completed",
  incomplete: "response.incomplete",
  cancelled: "response.incomplete",
  failed: "response.failed",
  in_progress: "response.in_progress",
};

/**
 * The events a stream of this stored response carries, in order, as POST /v1/responses with
 * stream: true sends them: created and in_progress, each output item added, its text or
 * arguments as one delta and done, the item done, then the event of the final status. A
 * response still in progress replays what is stored and ends at response.in_progress.
 */
export function replayEvents(response: ResponseObject): ReplayEvent[] {
  const start = { ...response, status: "in_progress" as const, output: [], usage: null };
  const events: ReplayEvent[] = [
    { type: "response.created", payload: { response: start } },
    { type: "response.in_progress", payload: { response: start } },
  ];
  response.output.forEach((item, outputIndex) => {
    if (item.type === "message") {
      events.push({
        type: "response.output_item.added",
        payload: {
          output_index: outputIndex,
          item: { ...item, status: "in_progress", content: [] },
        },
      });
      item.content.forEach((part, contentIndex) => {
        // An answer's message holds text only (images are parts of input messages).
        if (part.type === "input_image") return;
        const where = { item_id: item.id, output_index: outputIndex, content_index: contentIndex };
        const full =
          part.type === "output_text" ? { ...part, annotations: part.annotations ?? [] } : part;
        events.push(
          {
            type: "response.content_part.added",
            payload: { ...where, part: { ...full, text: "" } },
          },
          {
            type: "response.output_text.delta",
            payload: { ...where, delta: part.text, logprobs: [] },
          },
          {
            type: "response.output_text.done",
            payload: { ...where, text: part.text, logprobs: [] },
          },
          { type: "response.content_part.done", payload: { ...where, part: full } },
        );
      });
    } else if (item.type === "function_call") {
      const where = { item_id: item.id, output_index: outputIndex };
      events.push(
        {
          type: "response.output_item.added",
          payload: {
            output_index: outputIndex,
            item: { ...item, arguments: "", status: "in_progress" },
          },
        },
        {
          type: "response.function_call_arguments.delta",
          payload: { ...where, delta: item.arguments },
        },
        {
          type: "response.function_call_arguments.done",
          payload: { ...where, arguments: item.arguments },
        },
      );
    } else {
      events.push({
        type: "response.output_item.added",
        payload: { output_index: outputIndex, item },
      });
    }
    events.push({
      type: "response.output_item.done",
      payload: { output_index: outputIndex, item },
    });
  });
  if (response.status !== "in_progress") {
    events.push({ type: FINAL_EVENTS[response.status], payload: { response } });
  }
  return events;
}

/** How often a replay re-reads a response still in progress. */
export const REPLAY_POLL_MILLISECONDS = 200;

/**
 * Writes the replay of a stored response as server-sent events, after `startingAfter`. While
 * the response is in progress (a background response, or one another request is answering),
 * the stream stays open: the response is read again every REPLAY_POLL_MILLISECONDS and, once
 * it is final, the events not sent yet follow (its items, then its final event). Every
 * in-progress response ends (docs/server/responses.md, "Response lifecycle"), so the stream does too;
 * it also ends when the client hangs up.
 */
export async function sendReplay(
  reply: FastifyReply,
  requestId: string,
  response: ResponseObject,
  startingAfter: number | undefined,
  reload?: () => Promise<ResponseObject>,
): Promise<FastifyReply> {
  reply.hijack();
  const raw = reply.raw;
  let open = true;
  raw.on("close", () => {
    open = false;
  });
  raw.writeHead(200, {
    "x-request-id": requestId,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  let sent = startingAfter ?? -1;
  const write = (current: ResponseObject) => {
    replayEvents(current).forEach((event, sequence) => {
      if (sequence <= sent || !open) return;
      const data = JSON.stringify({
        type: event.type,
        sequence_number: sequence,
        ...event.payload,
      });
      raw.write(`event: ${event.type}\ndata: ${data}\n\n`);
      sent = sequence;
    });
  };
  let current = response;
  write(current);
  try {
    while (current.status === "in_progress" && reload !== undefined && open) {
      await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MILLISECONDS));
      current = await reload();
      write(current);
    }
  } catch (error) {
    reply.log.warn({ err: error }, "replaying a response stopped");
  }
  raw.end();
  return reply;
}
