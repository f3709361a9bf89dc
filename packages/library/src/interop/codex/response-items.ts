import { base64Decode } from "../../core/bytes.js";
import type { Block, ToolResultBlock } from "../../history/message.js";
import type { ConversationBuilder } from "../conversation-builder.js";
import {
  arrayOf,
  compactJson,
  field,
  recordOf,
  stringOf,
  type JsonRecord,
} from "../json-access.js";

/** Records what an item left out (the caller binds file and line). */
export type LeaveOut = (what: string, reason: string) => void;

/** The output Codex gives a call that never answered (an interrupted turn). */
export const CODEX_INTERRUPTED_OUTPUT = "aborted";

const ENCRYPTED_CONTENT_REASON =
  "encrypted content is provider-signed material that format 1 does not keep (A23); only the provider can read it";
const ENCRYPTED_REASON =
  "encrypted reasoning is provider-signed material that format 1 does not keep (A23); the summary is kept as a thinking item";

/** A `data:` URL's bytes as an image block; anything else is an omitted image, reported. */
export function imageFromUrl(url: string, builder: ConversationBuilder, leaveOut: LeaveOut): Block {
  const match = /^data:([a-z]+\/[a-z0-9.+-]+);base64,(.*)$/s.exec(url);
  const bytes = match === null ? undefined : base64Decode(match[2] ?? "");
  if (match === null || bytes === undefined) {
    leaveOut(
      "image by reference",
      "the image's bytes are not in the file (a URL, or data the publisher redacted); it is kept as an omitted image",
    );
    return { type: "imageOmitted", mimeType: match?.[1] ?? "image/png" };
  }
  return builder.image(bytes, match[1] ?? "image/png");
}

/** Text and images of a message's content parts (input_text, output_text, input_image, …). */
export function messageParts(
  content: unknown,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): { blocks: Block[]; text: string } {
  const direct = stringOf(content);
  if (direct !== undefined) return { blocks: [{ type: "text", text: direct }], text: direct };
  const blocks: Block[] = [];
  const texts: string[] = [];
  for (const part of arrayOf(content) ?? []) {
    const record = recordOf(part);
    const type = stringOf(field(record, "type"));
    const text = stringOf(field(record, "text"));
    if (
      (type === "input_text" || type === "output_text" || type === "text") &&
      text !== undefined
    ) {
      blocks.push({ type: "text", text });
      texts.push(text);
    } else if (type === "input_image") {
      blocks.push(imageFromUrl(stringOf(field(record, "image_url")) ?? "", builder, leaveOut));
    } else if (type === "encrypted_content") {
      leaveOut("encrypted message content", ENCRYPTED_CONTENT_REASON);
    } else {
      leaveOut(
        `content part ${type ?? "(no type)"}`,
        "format 1 messages hold text and images only",
      );
    }
  }
  return { blocks, text: texts.join("\n") };
}

/** A call's output: a string, or content items (text and images) in newer versions. */
function outputOf(
  payload: JsonRecord,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): { text: string; images: Block[]; isError: boolean } {
  const output = field(payload, "output");
  const text = stringOf(output);
  if (text !== undefined) return { text, images: [], isError: false };
  const record = recordOf(output);
  const success = field(record, "success");
  const content = field(record, "content") ?? output;
  const inner = stringOf(content);
  if (inner !== undefined) return { text: inner, images: [], isError: success === false };
  const texts: string[] = [];
  const images: Block[] = [];
  for (const part of arrayOf(content) ?? []) {
    const partRecord = recordOf(part);
    const type = stringOf(field(partRecord, "type"));
    const partText = stringOf(field(partRecord, "text"));
    if (partText !== undefined) texts.push(partText);
    else if (type === "input_image") {
      images.push(imageFromUrl(stringOf(field(partRecord, "image_url")) ?? "", builder, leaveOut));
    } else
      leaveOut(
        `output part ${type ?? "(no type)"}`,
        "format 1 tool results hold text and images only",
      );
  }
  return { text: texts.join("\n"), images, isError: success === false };
}

/**
 * One `response_item` payload into the conversation. `responseKey` groups the items of one
 * model response into one assistant message; it is returned changed after a call's output
 * (the next items belong to the next response). Returns false when the item type is unknown.
 */
export function addResponseItem(
  payload: JsonRecord,
  id: string,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
  responseKey: string,
): { known: boolean; nextKey: string } {
  const type = stringOf(field(payload, "type"));
  const same = { known: true, nextKey: responseKey };
  switch (type) {
    case "message": {
      const role = stringOf(field(payload, "role"));
      const { blocks, text } = messageParts(field(payload, "content"), builder, leaveOut);
      if (role === "assistant") {
        builder.assistant(responseKey, blocks);
        builder.item({ id, type: "assistant", text });
      } else if (role === "developer" || role === "system") {
        builder.notice(id, "developerMessage", text);
        leaveOut(
          `${role} message in the history`,
          `format 1 history has no ${role} role: the message is kept as a developerMessage notice, and verbatim render sends it only when given with --system`,
        );
      } else {
        builder.user(blocks);
        return { known: true, nextKey: `${id}` };
      }
      return same;
    }
    case "reasoning": {
      const texts: string[] = [];
      for (const part of [
        ...(arrayOf(field(payload, "summary")) ?? []),
        ...(arrayOf(field(payload, "content")) ?? []),
      ]) {
        const text = stringOf(field(recordOf(part), "text"));
        if (text !== undefined) texts.push(text);
      }
      if (texts.length > 0) builder.item({ id, type: "thinking", text: texts.join("\n\n") });
      if (stringOf(field(payload, "encrypted_content")) !== undefined)
        leaveOut("encrypted reasoning", ENCRYPTED_REASON);
      return same;
    }
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call":
    case "tool_search_call": {
      const custom = type === "custom_tool_call";
      const callID = stringOf(field(payload, "call_id")) ?? stringOf(field(payload, "id")) ?? id;
      const name =
        stringOf(field(payload, "name")) ??
        (type === "local_shell_call"
          ? "local_shell"
          : type === "tool_search_call"
            ? "tool_search"
            : "");
      const raw = custom
        ? field(payload, "input")
        : type === "local_shell_call"
          ? field(payload, "action")
          : field(payload, "arguments");
      const argumentText = stringOf(raw) ?? compactJson(raw ?? {});
      const namespace = stringOf(field(payload, "namespace"));
      builder.assistant(responseKey, [
        { type: "toolCall", id: callID, name, arguments: argumentText },
      ]);
      builder.item({
        id,
        type: "tool",
        name,
        status: "running",
        callID,
        detail: argumentText,
        ...(custom || namespace !== undefined
          ? {
              summary: [
                custom ? "custom tool call (free-form input)" : "",
                namespace === undefined ? "" : `namespace ${namespace}`,
              ]
                .filter(Boolean)
                .join("; "),
            }
          : {}),
      });
      return same;
    }
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output":
    case "tool_search_output": {
      const callID = stringOf(field(payload, "call_id")) ?? "";
      const { text, images, isError } =
        type === "tool_search_output"
          ? { text: compactJson(field(payload, "tools") ?? []), images: [], isError: false }
          : outputOf(payload, builder, leaveOut);
      const result: ToolResultBlock = {
        type: "toolResult",
        callID,
        toolName: builder.callName(callID) ?? "",
        isError,
        content: text,
      };
      if (!builder.toolResult(result, images)) {
        leaveOut(
          "call output without its call",
          "no call with this call_id is in the imported history (it was before a compaction or is missing)",
        );
      }
      return { known: true, nextKey: `${id}` };
    }
    case "web_search_call": {
      const action = recordOf(field(payload, "action"));
      const query =
        stringOf(field(action, "query")) ??
        (arrayOf(field(action, "queries")) ?? []).map(String).join("; ");
      builder.item({
        id,
        type: "webSearch",
        query,
        results: [],
        detail: compactJson(action ?? {}),
      });
      return same;
    }
    case "image_generation_call": {
      const result = stringOf(field(payload, "result")) ?? "";
      const bytes = base64Decode(result);
      if (bytes === undefined || bytes.length === 0) {
        leaveOut(
          "generated image",
          "its base64 result is not readable in the file (missing or shortened)",
        );
        builder.assistant(responseKey, [{ type: "imageOmitted", mimeType: "image/png" }]);
      } else {
        builder.assistant(responseKey, [builder.image(bytes, "image/png")]);
      }
      builder.notice(
        id,
        "imageGeneration",
        stringOf(field(payload, "revised_prompt")) ?? "generated image",
      );
      return same;
    }
    case "agent_message": {
      const { text } = messageParts(field(payload, "content"), builder, leaveOut);
      builder.notice(
        id,
        "agentMessage",
        text,
        compactJson({ author: field(payload, "author"), recipient: field(payload, "recipient") }),
      );
      return same;
    }
    case "compaction":
    case "compaction_summary": {
      builder.notice(id, "compacted", "The conversation was compacted by the provider.");
      if (field(payload, "encrypted_content") !== undefined)
        leaveOut("encrypted compaction", ENCRYPTED_CONTENT_REASON);
      return same;
    }
    default:
      return { known: false, nextKey: responseKey };
  }
}
