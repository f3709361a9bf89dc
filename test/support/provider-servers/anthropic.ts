/**
 * A local Anthropic Messages server (POST /v1/messages). Event order and fields follow the
 * captured streams test/fixtures/providers/anthropic/*-stream.sse: message_start (usage with
 * cache counts), ping, per block
 * content_block_start/_delta/_stop (thinking_delta + signature_delta, text_delta,
 * input_json_delta starting with an empty partial_json), message_delta (stop_reason and
 * cumulative usage), message_stop.
 */
import {
  bodyJson,
  pieces,
  sse,
  startProviderServer,
  type ProviderServer,
  type ScriptedRound,
} from "./harness.js";

function usageOf(round: ScriptedRound, output: number) {
  const usage = round.usage ?? { input: 100, output: 20 };
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheWrite ?? 0,
    cache_read_input_tokens: usage.cacheRead ?? 0,
    cache_creation: {
      ephemeral_5m_input_tokens: usage.cacheWrite ?? 0,
      ephemeral_1h_input_tokens: 0,
    },
    output_tokens: output,
    service_tier: "standard",
  };
}

export function writeAnthropic(round: ScriptedRound, stream: boolean, model: string, turn: number) {
  const id = `msg_01Local${String(turn).padStart(6, "0")}`;
  const stop = (round.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn";
  const signature = `EqQBCkgIARABGAIiQL${turn}signature`;
  const output = round.usage?.output ?? 20;
  if (!stream) {
    const content: unknown[] = [];
    if (round.thinking !== undefined)
      content.push({ type: "thinking", thinking: round.thinking, signature });
    if (round.text !== undefined) content.push({ type: "text", text: round.text });
    for (const call of round.toolCalls ?? []) {
      content.push({
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: JSON.parse(call.arguments) as unknown,
      });
    }
    const body = {
      model,
      id,
      type: "message",
      role: "assistant",
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: usageOf(round, output),
    };
    return { contentType: "application/json", body: JSON.stringify(body) };
  }
  let out = sse("message_start", {
    type: "message_start",
    message: {
      model,
      id,
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usageOf(round, 1),
    },
  });
  out += sse("ping", { type: "ping" });
  let index = 0;
  if (round.thinking !== undefined) {
    out += sse("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "thinking", thinking: "", signature: "" },
    });
    for (const piece of pieces(round.thinking)) {
      out += sse("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "thinking_delta", thinking: piece },
      });
    }
    out += sse("content_block_delta", {
      type: "content_block_delta",
      index,
      delta: { type: "signature_delta", signature },
    });
    out += sse("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  if (round.text !== undefined) {
    out += sse("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "text", text: "" },
    });
    for (const piece of pieces(round.text)) {
      out += sse("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text: piece },
      });
    }
    out += sse("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  for (const call of round.toolCalls ?? []) {
    out += sse("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
    });
    out += sse("content_block_delta", {
      type: "content_block_delta",
      index,
      delta: { type: "input_json_delta", partial_json: "" },
    });
    for (const piece of pieces(call.arguments, 5)) {
      out += sse("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: piece },
      });
    }
    out += sse("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  const final = usageOf(round, output);
  out += sse("message_delta", {
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: {
      input_tokens: final.input_tokens,
      cache_creation_input_tokens: final.cache_creation_input_tokens,
      cache_read_input_tokens: final.cache_read_input_tokens,
      output_tokens: output,
    },
  });
  out += sse("message_stop", { type: "message_stop" });
  return { contentType: "text/event-stream; charset=utf-8", body: out };
}

export function startAnthropicServer(): Promise<ProviderServer> {
  return startProviderServer({
    write: writeAnthropic,
    basePath: "",
    modelOf: (request) => String(bodyJson(request)["model"]),
    streamOf: (request) => bodyJson(request)["stream"] === true,
  });
}
