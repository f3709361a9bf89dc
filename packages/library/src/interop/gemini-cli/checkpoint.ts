import type { Block } from "../../history/message.js";
import type { ConversationBuilder } from "../conversation-builder.js";
import { field, recordOf, stringOf } from "../json-access.js";
import type { LineLedger } from "../report.js";
import { addCall, GEMINI_PROVIDER } from "./messages.js";
import { readParts, responseText } from "./parts.js";

/**
 * Adds the history of a `/chat save` checkpoint (`checkpoint-<tag>.json`: a list of Gemini API
 * `Content`, or `{history, authType}` since 0.4x) to the conversation: record n is its n-th
 * content. Returns the records that held something of the conversation.
 */
export function addCheckpoint(
  file: string,
  contents: readonly unknown[],
  builder: ConversationBuilder,
  ledger: LineLedger,
): number[] {
  const kept: number[] = [];
  /** Calls without a result, in order, for responses that carry no id (older API versions). */
  const pending: { id: string; name: string }[] = [];
  builder.provider = GEMINI_PROVIDER;
  contents.forEach((entry, index) => {
    const record = index + 1;
    const leaveOut = (what: string, reason: string): void =>
      ledger.leftOut.add(file, what, reason, record);
    const content = recordOf(entry);
    const role = stringOf(field(content, "role"));
    if (role !== "user" && role !== "model") {
      ledger.leftOutLine(
        file,
        record,
        `content with role ${role ?? "(none)"}`,
        "a checkpoint's history holds user and model contents only",
      );
      return;
    }
    const parts = readParts(field(content, "parts"), builder, leaveOut);
    const id = `R${record}`;
    if (role === "model") {
      parts.thoughts.forEach((text, at) =>
        builder.item({ id: `${id}.thought${at}`, type: "thinking", text }),
      );
      const blocks: Block[] = [
        ...parts.texts.filter((text) => text !== "").map((text): Block => ({ type: "text", text })),
        ...parts.images,
      ];
      const text = parts.texts.join("");
      if (text !== "") builder.item({ id, type: "assistant", text });
      parts.calls.forEach((call, at) => {
        const callID = call.id ?? `call_R${record}_${at}`;
        addCall(builder, blocks, `${id}.call${at}`, { ...call, id: callID });
        pending.push({ id: callID, name: call.name });
      });
      builder.assistant(id, blocks);
    } else {
      for (const response of parts.responses) {
        const at = pending.findIndex((call) =>
          response.id === undefined ? call.name === response.name : call.id === response.id,
        );
        const call = pending[at];
        if (call !== undefined) pending.splice(at, 1);
        const { text, isError } = responseText(response.response);
        const added = builder.toolResult({
          type: "toolResult",
          callID: call?.id ?? response.id ?? "",
          toolName: response.name,
          isError,
          content: text,
        });
        if (!added)
          leaveOut("function response without its call", "no call of the history matches it");
      }
      const blocks: Block[] = [
        ...parts.texts.map((text): Block => ({ type: "text", text })),
        ...parts.images,
      ];
      builder.user(blocks);
      if (parts.texts.length > 0 || parts.images.length > 0)
        builder.item({
          id,
          type: "user",
          text: parts.texts.join("\n"),
          ...(parts.images.length > 0 ? { hasImage: true } : {}),
        });
    }
    kept.push(record);
  });
  return kept;
}
