import type { ModelUsage } from "../../trajectory/usage.js";
import { arrayOf, compactJson, field, recordOf, stringOf } from "../json-access.js";
import { inspectUsage } from "./source-usage.js";

/** What tells an assistant message and a model call's output apart: content and call ids. */
function outputKey(message: unknown): string {
  const record = recordOf(message);
  const calls = (arrayOf(field(record, "tool_calls")) ?? []).map((call) =>
    stringOf(field(recordOf(call), "id")),
  );
  return compactJson([field(record, "content") ?? null, calls]);
}

/**
 * The usage of each model call of an Inspect sample, by the index of the assistant message it
 * produced. A `model` event's output names its message by `id` (newer logs); without ids it is
 * the next assistant message with the same content and tool calls. Calls that produced no
 * message of the sample (a scorer's, a retried one) are not attached to any.
 */
export function inspectCallUsage(
  messages: readonly unknown[],
  events: readonly unknown[],
): Map<number, ModelUsage> {
  const assistants: { index: number; id: string | undefined; key: string }[] = [];
  messages.forEach((message, index) => {
    const record = recordOf(message);
    if (stringOf(field(record, "role")) !== "assistant") return;
    assistants.push({ index, id: stringOf(field(record, "id")), key: outputKey(record) });
  });
  const usage = new Map<number, ModelUsage>();
  let next = 0;
  for (const entry of events) {
    const event = recordOf(entry);
    if (stringOf(field(event, "event")) !== "model") continue;
    const output = recordOf(field(event, "output"));
    const call = inspectUsage(
      recordOf(field(output, "usage")),
      stringOf(field(event, "model")) ?? stringOf(field(output, "model")),
    );
    if (call === undefined) continue;
    const message = recordOf(
      field(recordOf((arrayOf(field(output, "choices")) ?? [])[0]), "message"),
    );
    const id = stringOf(field(message, "id"));
    const key = outputKey(message);
    const found =
      id !== undefined
        ? assistants.findIndex((one) => one.id === id)
        : assistants.findIndex((one, at) => at >= next && one.key === key);
    const assistant = assistants[found];
    if (assistant === undefined || usage.has(assistant.index)) continue;
    usage.set(assistant.index, call);
    next = found + 1;
  }
  return usage;
}
