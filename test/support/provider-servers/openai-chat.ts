/**
 * A local OpenAI Chat Completions server (POST /v1/chat/completions), and the OpenRouter
 * variant. Chunks follow the bodies under test/fixtures/providers/openai-chat/ and openrouter/
 * (captured and documented ones, see SOURCES.md there): a first chunk with the role, content
 * deltas, a tool call's first chunk with id, type and name and then argument pieces, a chunk
 * with the finish_reason, a usage chunk with empty choices, `data: [DONE]`. OpenRouter adds
 * `: OPENROUTER PROCESSING` comments, `provider`, `reasoning` / `reasoning_details` and
 * `usage.cost`.
 */
import {
  bodyJson,
  pieces,
  startProviderServer,
  type ProviderServer,
  type ScriptedRound,
} from "./harness.js";

function usageOf(round: ScriptedRound, openrouter: boolean) {
  const usage = round.usage ?? { input: 100, output: 20 };
  const cacheRead = usage.cacheRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const prompt = usage.input + cacheRead + cacheWrite;
  return openrouter
    ? {
        prompt_tokens: prompt,
        completion_tokens: usage.output,
        total_tokens: prompt + usage.output,
        cost: 0.000123,
        is_byok: false,
        prompt_tokens_details: {
          cached_tokens: cacheRead,
          cache_write_tokens: cacheWrite,
          audio_tokens: 0,
        },
        cost_details: { upstream_inference_cost: null },
        completion_tokens_details: { reasoning_tokens: 0, image_tokens: 0 },
      }
    : {
        prompt_tokens: prompt,
        completion_tokens: usage.output,
        total_tokens: prompt + usage.output,
        prompt_tokens_details: { cached_tokens: cacheRead, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      };
}

export function writeChat(openrouter: boolean) {
  return (round: ScriptedRound, stream: boolean, model: string, turn: number) => {
    const id = openrouter ? `gen-17000000${turn}-Local` : `chatcmpl-Local${turn}`;
    const created = 1694268190 + turn;
    const calls = round.toolCalls ?? [];
    const finish = calls.length > 0 ? "tool_calls" : "stop";
    const head = openrouter
      ? { id, provider: "Anthropic", model, object: "chat.completion.chunk", created }
      : {
          id,
          object: "chat.completion.chunk",
          created,
          model,
          system_fingerprint: "fp_44709d6fcb",
        };
    const details =
      round.thinking === undefined
        ? []
        : [
            {
              type: "reasoning.text",
              text: round.thinking,
              signature: `sig-${turn}`,
              format: "anthropic-claude-v1",
              index: 0,
            },
          ];
    if (!stream) {
      const message: Record<string, unknown> = {
        role: "assistant",
        content: round.text ?? null,
        refusal: null,
      };
      if (openrouter && round.thinking !== undefined) {
        message["reasoning"] = round.thinking;
        message["reasoning_details"] = details;
      }
      if (calls.length > 0) {
        message["tool_calls"] = calls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        }));
      }
      const body = {
        ...head,
        object: "chat.completion",
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage: usageOf(round, openrouter),
      };
      return { contentType: "application/json", body: JSON.stringify(body) };
    }
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
      `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: null })}\n\n`;
    let out = openrouter ? ": OPENROUTER PROCESSING\n\n" : "";
    out += chunk({ role: "assistant", content: "", refusal: null });
    if (openrouter && round.thinking !== undefined) {
      for (const piece of pieces(round.thinking))
        out += chunk({ role: "assistant", content: "", reasoning: piece });
      out += chunk({ role: "assistant", content: "", reasoning: null, reasoning_details: details });
    }
    for (const piece of pieces(round.text ?? "")) out += chunk({ content: piece });
    calls.forEach((call, index) => {
      out += chunk({
        tool_calls: [
          { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
        ],
      });
      for (const piece of pieces(call.arguments, 5))
        out += chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    out += chunk({}, finish);
    out += `data: ${JSON.stringify({ ...head, choices: [], usage: usageOf(round, openrouter) })}\n\n`;
    out += "data: [DONE]\n\n";
    return { contentType: "text/event-stream", body: out };
  };
}

export function startOpenAIChatServer(): Promise<ProviderServer> {
  return startProviderServer({
    write: writeChat(false),
    basePath: "/v1",
    modelOf: (request) => String(bodyJson(request)["model"]),
    streamOf: (request) => bodyJson(request)["stream"] === true,
  });
}

export function startOpenRouterServer(): Promise<ProviderServer> {
  return startProviderServer({
    write: writeChat(true),
    basePath: "/api/v1",
    modelOf: (request) => String(bodyJson(request)["model"]),
    streamOf: (request) => bodyJson(request)["stream"] === true,
  });
}
