import { VerbatimError } from "../core/errors.js";
import type {
  ChatMLContentPart,
  ChatMLMessage,
  ChatMLMetadata,
  ChatMLToolCall,
} from "../history/chatml.js";
import type { ChatMLTrajectory, ModelVisibleTrajectory } from "./trajectory.js";

/**
 * The model-visible projection (SPEC B2, B12). The model never sees stored rows; from a ChatML
 * trajectory this keeps only what the model should act on:
 * - roles and content in order; tool names; `metadata.execution_mechanism` of tool results
 *   (two tools with one display name stay distinguishable, B10);
 * - tool-call ids replaced by turn-local aliases `call_1`, `call_2`, … in order of appearance
 *   within each turn, a result taking the alias of the latest call with its id in the turn;
 * - the trajectory-level `metadata.redacted` and `metadata.content_truncated`.
 * Everything else (message ids, item keys, turn ids, positions, revisions, provider ids,
 * statuses, any other field a message carries at run time) is dropped: every message is
 * rebuilt from the allowed fields, so unknown fields cannot pass through.
 */
export function modelVisibleTrajectory(trajectory: ChatMLTrajectory): ModelVisibleTrajectory {
  const spans = turnSpans(trajectory);
  const messages: ChatMLMessage[] = [];
  let index = 0;
  for (const count of spans) {
    const aliases = new Map<string, string>();
    let next = 0;
    const fresh = (): string => `call_${++next}`;
    for (const message of trajectory.messages.slice(index, index + count)) {
      messages.push(rebuild(message, aliases, fresh));
    }
    index += count;
  }
  return {
    messages,
    metadata: {
      redacted: trajectory.metadata.redacted === true,
      content_truncated: trajectory.metadata.content_truncated === true,
    },
  };
}

/** The deterministic text of a model-visible trajectory: compact JSON, fixed key order. */
export function modelVisibleJson(trajectory: ModelVisibleTrajectory): string {
  return JSON.stringify(trajectory);
}

function turnSpans(trajectory: ChatMLTrajectory): number[] {
  const total = trajectory.messages.length;
  if (trajectory.turns.length === 0) return total === 0 ? [] : [total];
  const spans = trajectory.turns.map((turn) => turn.message_count);
  const sum = spans.reduce((a, b) => a + b, 0);
  if (sum !== total || spans.some((count) => !Number.isInteger(count) || count < 0)) {
    throw new VerbatimError(
      "invalid_argument",
      `the turns cover ${sum} messages but the trajectory has ${total}`,
      { where: "turns", hint: "Pass a trajectory as the ChatML projection returns it" },
    );
  }
  return spans;
}

function rebuildContent(
  content: string | readonly ChatMLContentPart[],
): string | ChatMLContentPart[] {
  if (typeof content === "string") return content;
  return content.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : { type: "image_url", image_url: { url: part.image_url.url } },
  );
}

function rebuild(
  message: ChatMLMessage,
  aliases: Map<string, string>,
  fresh: () => string,
): ChatMLMessage {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: rebuildContent(message.content) };
    case "assistant": {
      const content = message.content === null ? null : rebuildContent(message.content);
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return { role: "assistant", content };
      const toolCalls: ChatMLToolCall[] = calls.map((call) => {
        const alias = fresh();
        aliases.set(call.id, alias);
        return {
          id: alias,
          type: "function",
          function: { name: call.function.name, arguments: call.function.arguments },
        };
      });
      return { role: "assistant", content, tool_calls: toolCalls };
    }
    case "tool": {
      const alias = aliases.get(message.tool_call_id) ?? fresh();
      const mechanism = message.metadata?.execution_mechanism;
      const metadata: ChatMLMetadata | undefined =
        mechanism === undefined ? undefined : { execution_mechanism: mechanism };
      return {
        role: "tool",
        tool_call_id: alias,
        ...(message.name === undefined ? {} : { name: message.name }),
        content: message.content,
        ...(metadata === undefined ? {} : { metadata }),
      };
    }
    default:
      return message satisfies never;
  }
}
