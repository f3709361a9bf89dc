/**
 * A local OpenAI Responses server (POST /v1/responses). Events follow the streams under
 * test/fixtures/providers/openai-responses/ (a captured tool-call stream, the API reference's
 * text example):
 * response.created, response.in_progress, per output item output_item.added, the deltas
 * (reasoning_summary_text, output_text, function_call_arguments), output_item.done with the
 * whole item, and response.completed with the whole response and its usage.
 */
import {
  bodyJson,
  pieces,
  sse,
  startProviderServer,
  type ProviderServer,
  type ScriptedRound,
} from "./harness.js";

export function writeResponses(round: ScriptedRound, stream: boolean, model: string, turn: number) {
  const id = `resp_local${turn}`;
  const usage = round.usage ?? { input: 100, output: 20 };
  const cached = usage.cacheRead ?? 0;
  const output: Record<string, unknown>[] = [];
  let out = "";
  let sequence = 0;
  const emit = (type: string, data: Record<string, unknown>) => {
    out += sse(type, { type, sequence_number: sequence++, ...data });
  };
  const base = { id, object: "response", created_at: 1741476542 + turn, model, store: false };
  emit("response.created", {
    response: { ...base, status: "in_progress", output: [], usage: null },
  });
  emit("response.in_progress", {
    response: { ...base, status: "in_progress", output: [], usage: null },
  });
  if (round.thinking !== undefined) {
    const item = { id: `rs_local${turn}`, type: "reasoning", summary: [] as unknown[] };
    const index = output.length;
    emit("response.output_item.added", { output_index: index, item });
    for (const piece of pieces(round.thinking)) {
      emit("response.reasoning_summary_text.delta", {
        item_id: item.id,
        output_index: index,
        summary_index: 0,
        delta: piece,
      });
    }
    const done = {
      ...item,
      summary: [{ type: "summary_text", text: round.thinking }],
      encrypted_content: `gAAAAABlocal${turn}`,
    };
    emit("response.output_item.done", { output_index: index, item: done });
    output.push(done);
  }
  if (round.text !== undefined) {
    const item = {
      id: `msg_local${turn}`,
      type: "message",
      status: "in_progress",
      content: [] as unknown[],
      role: "assistant",
    };
    const index = output.length;
    emit("response.output_item.added", { output_index: index, item });
    emit("response.content_part.added", {
      item_id: item.id,
      output_index: index,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const piece of pieces(round.text)) {
      emit("response.output_text.delta", {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    }
    emit("response.output_text.done", {
      item_id: item.id,
      output_index: index,
      content_index: 0,
      text: round.text,
      logprobs: [],
    });
    const part = { type: "output_text", text: round.text, annotations: [], logprobs: [] };
    emit("response.content_part.done", {
      item_id: item.id,
      output_index: index,
      content_index: 0,
      part,
    });
    const done = { ...item, status: "completed", content: [part] };
    emit("response.output_item.done", { output_index: index, item: done });
    output.push(done);
  }
  for (const call of round.toolCalls ?? []) {
    const item = {
      id: `fc_${call.id}`,
      type: "function_call",
      status: "in_progress",
      arguments: "",
      call_id: call.id,
      name: call.name,
    };
    const index = output.length;
    emit("response.output_item.added", { output_index: index, item });
    for (const piece of pieces(call.arguments, 5)) {
      emit("response.function_call_arguments.delta", {
        item_id: item.id,
        output_index: index,
        delta: piece,
      });
    }
    emit("response.function_call_arguments.done", {
      item_id: item.id,
      output_index: index,
      arguments: call.arguments,
    });
    const done = { ...item, status: "completed", arguments: call.arguments };
    emit("response.output_item.done", { output_index: index, item: done });
    output.push(done);
  }
  const response = {
    ...base,
    status: "completed",
    error: null,
    incomplete_details: null,
    output,
    usage: {
      input_tokens: usage.input + cached,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + cached + usage.output,
    },
  };
  emit("response.completed", { response });
  return stream
    ? { contentType: "text/event-stream; charset=utf-8", body: out }
    : { contentType: "application/json", body: JSON.stringify(response) };
}

export function startOpenAIResponsesServer(): Promise<ProviderServer> {
  return startProviderServer({
    write: writeResponses,
    basePath: "/v1",
    modelOf: (request) => String(bodyJson(request)["model"]),
    streamOf: (request) => bodyJson(request)["stream"] === true,
  });
}
