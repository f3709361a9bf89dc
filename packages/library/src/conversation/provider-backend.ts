import { utf8Encode } from "../core/bytes.js";
import type { JsonObject, JsonValue } from "../core/strict-json.js";
import type { Message } from "../history/message.js";
import { renderRequest } from "../providers/render.js";
import { streamRound } from "../providers/transport.js";
import type {
  AttachedSignedMaterial,
  CacheOptions,
  ProviderId,
  RoundResult,
  SignedMaterial,
  TransportOptions,
} from "../providers/types.js";
import { member } from "../providers/wire/round-builder.js";
import type {
  BackendRoundRequest,
  BackendRoundResult,
  ProviderBackend,
  RoundCompaction,
} from "./backend.js";

export interface ProviderBackendOptions {
  readonly provider: ProviderId;
  readonly model: string;
  /** The most output tokens per request (default 8192). */
  readonly maxTokens?: number;
  /** Keys, base URL, retries, fetch (src/providers; defaults from the environment). */
  readonly transport?: TransportOptions;
  /** Cache settings; `previousMessageCount` is derived from the history. */
  readonly cache?: Omit<CacheOptions, "previousMessageCount">;
  /** Provider-specific top-level fields (for example Anthropic `thinking`). */
  readonly extras?: JsonObject;
  /** Receives each request body as sent (logs, tests). */
  readonly onRequest?: (body: string) => void;
}

/**
 * The built-in backend over the provider layer: each round renders the history with
 * `renderRequest`, sends the exact bytes with `streamRound` and maps the stream to panel events.
 * Signed provider material (thinking signatures) is kept in memory for the running turn only
 * and never reaches the history (A23). The request body is a function of the history alone, so
 * a reopened conversation sends the same bytes as one that stayed open (A26).
 */
export function providerBackend(options: ProviderBackendOptions): ProviderBackend {
  let signed: { message: Message; material: SignedMaterial }[] = [];
  /** Encrypted compaction items, sent with every later request (not only the turn's). */
  const compactions = new Map<Message, SignedMaterial>();
  return {
    kind: "provider",
    provider: options.provider,
    model: options.model,
    async round(request: BackendRoundRequest): Promise<BackendRoundResult> {
      const inHistory = new Set(request.history);
      signed = signed.filter((entry) => inHistory.has(entry.message));
      for (const message of compactions.keys()) {
        if (!inHistory.has(message)) compactions.delete(message);
      }
      const attached: AttachedSignedMaterial[] = [];
      const start = compactions.size === 0 ? request.turnStart : 0;
      for (let index = start; index < request.history.length; index += 1) {
        const message = request.history[index];
        const material =
          index < request.turnStart
            ? message === undefined
              ? undefined
              : compactions.get(message)
            : signed.find((entry) => entry.message === message)?.material;
        if (material !== undefined) attached.push({ messageIndex: index, material });
      }
      const previous = lastAssistantIndex(request.history);
      const cache: CacheOptions = {
        ...options.cache,
        ...(previous === undefined ? {} : { previousMessageCount: previous }),
      };
      const rendered = renderRequest(options.provider, {
        history: request.history,
        images: request.images,
        options: {
          model: options.model,
          ...(request.system === undefined ? {} : { system: request.system }),
          ...(request.tools.length === 0 ? {} : { tools: request.tools }),
          maxTokens: options.maxTokens ?? 8192,
          cache,
          ...(options.extras === undefined ? {} : { extras: options.extras }),
        },
        ...(attached.length === 0 ? {} : { signed: attached }),
      });
      options.onRequest?.(rendered.body);
      const stream = streamRound(
        { provider: options.provider, model: options.model, body: rendered.body, stream: true },
        { ...options.transport, signal: request.signal },
      );
      for (;;) {
        const next = await stream.next();
        if (next.done === true) {
          const result = next.value;
          signed.push({ message: result.message, material: result.signed });
          const kept = compactionMaterial(result.signed);
          if (kept !== undefined) compactions.set(result.message, kept);
          const compaction = roundCompaction(result);
          const citations = result.panel.flatMap((part) =>
            part.kind === "text" ? (part.citations ?? []) : [],
          );
          return {
            message: result.message,
            usage: result.usage,
            stopReason: result.stopReason,
            requestBody: utf8Encode(rendered.body),
            ...(result.images === undefined ? {} : { images: result.images }),
            ...(citations.length === 0 ? {} : { citations }),
            ...(compaction === undefined ? {} : { compaction }),
          };
        }
        const event = next.value;
        switch (event.type) {
          case "text":
          case "thinking":
            request.onEvent({ type: event.type, text: event.text });
            break;
          case "toolCallStart":
            request.onEvent({ type: "toolCall", id: event.id, name: event.name });
            break;
          case "webSearch":
            request.onEvent({
              type: "webSearch",
              query: event.query,
              results: [],
              detail: event.results,
            });
            break;
          case "toolCallDelta":
          case "usage":
          case "done":
            break;
          default: {
            const unreachable: never = event;
            void unreachable;
          }
        }
      }
    },
  };
}

/** The previous request sent every message before the newest assistant message. */
function lastAssistantIndex(history: readonly Message[]): number | undefined {
  for (let index = history.length - 1; index >= 0; index -= 1) {
    if (history[index]?.role === "assistant") return index;
  }
  return undefined;
}

const isCompaction = (value: JsonValue): boolean => member(value, "type") === "compaction";

/**
 * The part of a round's signed material that outlives the turn: its encrypted compaction items
 * (OpenAI Responses), which the provider needs with every later request.
 */
function compactionMaterial(material: SignedMaterial): SignedMaterial | undefined {
  const leading = material.leading.filter(isCompaction);
  if (leading.length === 0) return undefined;
  return {
    provider: material.provider,
    leading,
    blockSignatures: [],
    trailing: [],
    reasoningDetails: [],
  };
}

/** What the round says of a provider compaction: the last summary's block, or encrypted. */
function roundCompaction(result: RoundResult): RoundCompaction | undefined {
  if (!result.panel.some((part) => part.kind === "compaction")) return undefined;
  let summary: string | undefined;
  for (const part of result.panel) {
    if (part.kind === "compaction" && part.summary !== undefined) summary = part.summary;
  }
  const native = result.signed.nativeBlocks?.filter((entry) => isCompaction(entry.value)).at(-1);
  if (summary !== undefined && summary.trim() !== "" && native !== undefined) {
    return { kind: "summary", block: native.block, summary };
  }
  return result.signed.leading.some(isCompaction) ? { kind: "encrypted" } : undefined;
}
