/**
 * A local Gemini server (POST /v1beta/models/{model}:generateContent and
 * :streamGenerateContent?alt=sse). Chunks follow the captured bodies under
 * test/fixtures/providers/gemini/ (gemini-3-pro-preview streams): each SSE event is one
 * GenerateContentResponse with new parts, events separated by CRLF CRLF; thought parts carry
 * `thought: true`; function calls come without an `id`, the first one carrying the
 * `thoughtSignature`; the closing chunk has an empty text part (carrying the signature after
 * a text answer; a JSON body has it on the text part), `finishReason` and the full
 * `usageMetadata`.
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
  const textSignature = `Cs0BAdHtim${turn}text`;
  texts.forEach((piece, index) => {
    // A JSON body carries the signature on the (last) text part; a stream sends it on an empty
    // text part of its own in the closing chunk, as the captured gemini-3 bodies do.
    const last = index === texts.length - 1 && calls.length === 0 && !stream;
    chunks.push([last ? { text: piece, thoughtSignature: textSignature } : { text: piece }]);
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
  if (stream && (texts.length > 0 || calls.length > 0)) {
    // The closing chunk of a captured stream: an empty text part (signed after text).
    chunks.push([
      calls.length === 0 ? { text: "", thoughtSignature: textSignature } : { text: "" },
    ]);
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
