/**
 * A local Gemini server (POST /v1beta/models/{model}:generateContent and
 * :streamGenerateContent?alt=sse). Chunks follow the captured bodies under
 * test/fixtures/providers/gemini/ (gemini-3-pro-preview streams): each SSE event is one
 * GenerateContentResponse with new parts, events separated by CRLF CRLF; thought parts carry
 * `thought: true`; function calls come without an `id`, the first one carrying the
 * `thoughtSignature`; the last chunk has `finishReason` and the full `usageMetadata`.
 */
import { pieces, startProviderServer, type ProviderServer, type ScriptedRound } from "./harness.js";

export function writeGemini(round: ScriptedRound, stream: boolean, model: string, turn: number) {
  const usage = round.usage ?? { input: 100, output: 20 };
  const cached = usage.cacheRead ?? 0;
  const responseId = `local-response-${turn}`;
  const chunks: unknown[][] = [];
  if (round.thinking !== undefined)
    for (const piece of pieces(round.thinking, 8)) chunks.push([{ text: piece, thought: true }]);
  const texts = pieces(round.text ?? "", 4);
  const calls = round.toolCalls ?? [];
  texts.forEach((piece, index) => {
    const last = index === texts.length - 1 && calls.length === 0;
    chunks.push([
      last ? { text: piece, thoughtSignature: `Cs0BAdHtim${turn}text` } : { text: piece },
    ]);
  });
  if (calls.length > 0) {
    chunks.push(
      calls.map((call, index) => {
        const part: Record<string, unknown> = {
          functionCall: { name: call.name, args: JSON.parse(call.arguments) as unknown },
        };
        if (index === 0) part["thoughtSignature"] = `Cs0BAdHtim${turn}call`;
        return part;
      }),
    );
  }
  if (chunks.length === 0) chunks.push([{ text: "" }]);
  const finalUsage = {
    promptTokenCount: usage.input + cached,
    candidatesTokenCount: usage.output,
    totalTokenCount: usage.input + cached + usage.output,
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
    promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.input + cached }],
    thoughtsTokenCount: round.thinking === undefined ? 0 : 7,
  };
  const response = (parts: unknown[], last: boolean) => ({
    candidates: [
      { content: { parts, role: "model" }, ...(last ? { finishReason: "STOP" } : {}), index: 0 },
    ],
    usageMetadata: last
      ? finalUsage
      : {
          promptTokenCount: usage.input + cached,
          totalTokenCount: usage.input + cached,
          promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.input + cached }],
        },
    modelVersion: model,
    responseId,
  });
  if (!stream) {
    return {
      contentType: "application/json; charset=UTF-8",
      body: JSON.stringify(response(chunks.flat(), true), null, 2),
    };
  }
  const body = chunks
    .map(
      (parts, index) =>
        `data: ${JSON.stringify(response(parts, index === chunks.length - 1))}\r\n\r\n`,
    )
    .join("");
  return { contentType: "text/event-stream", body };
}

export function startGeminiServer(): Promise<ProviderServer> {
  return startProviderServer({
    write: writeGemini,
    basePath: "/v1beta",
    modelOf: (request) => decodeURIComponent(/\/models\/([^:]+):/.exec(request.url)?.[1] ?? ""),
    streamOf: (request) => request.url.includes(":streamGenerateContent"),
  });
}
