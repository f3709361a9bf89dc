import type { ModelUsage } from "../../trajectory/usage.js";
import { arrayOf, field, recordOf, stringOf } from "../json-access.js";
import { chatParts, toolCallItem } from "./chat-messages.js";
import type { RecordLedger, TurnRowsBuilder } from "./rows.js";

/**
 * Chat-shaped messages into the rows of one turn: each message one record of the ledger,
 * imported (as one or more items) or reported. `key` names a message's items by its index;
 * `usage` gives the usage of the model call behind an assistant message, by index, which goes
 * on the message's first item.
 */
export function addChatMessages(
  messages: readonly unknown[],
  rows: TurnRowsBuilder,
  ledger: RecordLedger,
  key: (index: number) => string,
  recordBase = 0,
  usage: ReadonlyMap<number, ModelUsage> = new Map(),
): void {
  const callNames = new Map<string, string>();
  messages.forEach((entry, index) => {
    const record = recordBase + index + 1;
    const message = recordOf(entry);
    const role = stringOf(field(message, "role"));
    const parts = chatParts(field(message, "content"));
    for (const type of parts.unknownParts) {
      ledger.leftOutPart(
        record,
        `content part ${type}`,
        "trajectory items hold text, images and reasoning only",
      );
    }
    switch (role) {
      case "system":
        rows.add(key(index), { type: "system_message", text: parts.text });
        break;
      case "user":
        rows.add(key(index), {
          type: "user_message",
          text: parts.text,
          ...(parts.images.length === 0 ? {} : { images: parts.images.map((url) => ({ url })) }),
        });
        break;
      case "assistant": {
        let callUsage = usage.get(index);
        const take = (): ModelUsage | undefined => {
          const taken = callUsage;
          callUsage = undefined;
          return taken;
        };
        if (parts.reasoning.length > 0)
          rows.add(
            `${key(index)}.reasoning`,
            { type: "reasoning", summary: [...parts.reasoning] },
            take(),
          );
        const calls = arrayOf(field(message, "tool_calls")) ?? [];
        if (parts.text !== "" || calls.length === 0)
          rows.add(key(index), { type: "agent_message", text: parts.text }, take());
        if (parts.images.length > 0) {
          ledger.leftOutPart(record, "assistant image", "an agent_message item holds text only");
        }
        calls.forEach((call, callIndex) => {
          const item = toolCallItem(recordOf(call) ?? {}, `${key(index)}.call.${callIndex}`);
          if (item.type === "tool_call") callNames.set(item.call_id, item.name);
          rows.add(`${key(index)}.call.${callIndex}`, item, take());
        });
        break;
      }
      case "tool": {
        const callId =
          stringOf(field(message, "tool_call_id")) ??
          stringOf((arrayOf(field(message, "tool_call_ids")) ?? [])[0]) ??
          `${key(index)}.unpaired`;
        const error = field(message, "error");
        rows.add(key(index), {
          type: "tool_result",
          call_id: callId,
          name:
            stringOf(field(message, "function")) ??
            stringOf(field(message, "name")) ??
            callNames.get(callId) ??
            "tool",
          output: parts.text,
          is_error: error !== undefined && error !== null,
          execution_mechanism: "local_dynamic",
        });
        if (parts.images.length > 0)
          ledger.leftOutPart(record, "tool result image", "a tool_result item holds text only");
        break;
      }
      default:
        ledger.leftOutRecord(
          record,
          `message with role ${role ?? "(none)"}`,
          "trajectory items have no such role",
        );
        return;
    }
    ledger.importedRecord();
  });
}
