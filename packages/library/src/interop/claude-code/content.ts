import { base64Decode } from "../../core/bytes.js";
import type { Citation } from "../../format/items.js";
import type { Block, ToolResultBlock } from "../../history/message.js";
import type { ConversationBuilder } from "../conversation-builder.js";
import {
  arrayOf,
  compactJson,
  countOf,
  field,
  numberOf,
  recordOf,
  stringOf,
  type JsonRecord,
} from "../json-access.js";
import type { SourceLine } from "../jsonl.js";
import { contentOf, messageIdOf, messageOf } from "./lines.js";

/** Records what a line's content left out (the caller's ledger, with file and line bound). */
export type LeaveOut = (what: string, reason: string) => void;

const SIGNATURE_REASON =
  "format 1 keeps no provider-signed material (A23); the thinking text is kept as a thinking item";

/** An image block of Anthropic's shape (`source.type: base64`) as a history block. */
function imageBlock(
  block: JsonRecord,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): Block | undefined {
  const source = recordOf(field(block, "source"));
  const mimeType = stringOf(field(source, "media_type")) ?? "application/octet-stream";
  if (stringOf(field(source, "type")) !== "base64") {
    leaveOut(
      `image with source ${stringOf(field(source, "type")) ?? "(none)"}`,
      "only images with their bytes in the file (base64) can be kept; the source holds a reference",
    );
    return { type: "imageOmitted", mimeType };
  }
  const bytes = base64Decode(stringOf(field(source, "data")) ?? "");
  if (bytes === undefined || !/^[a-z]+\/[a-z0-9.+-]+$/.test(mimeType)) {
    leaveOut(
      "image with unreadable data",
      "its base64 data or media type is not valid in the source",
    );
    return {
      type: "imageOmitted",
      mimeType: /^[a-z]+\/[a-z0-9.+-]+$/.test(mimeType) ? mimeType : "image/png",
    };
  }
  return builder.image(bytes, mimeType);
}

/** A tool_result's content as one text (parts joined by a blank line) and its images. */
function toolResultContent(
  block: JsonRecord,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): { text: string; images: Block[] } {
  const content = field(block, "content");
  const text = stringOf(content);
  if (text !== undefined) return { text, images: [] };
  const texts: string[] = [];
  const images: Block[] = [];
  for (const part of arrayOf(content) ?? []) {
    const record = recordOf(part);
    const type = stringOf(field(record, "type"));
    if (type === "text") texts.push(stringOf(field(record, "text")) ?? "");
    else if (type === "image" && record !== undefined) {
      const image = imageBlock(record, builder, leaveOut);
      if (image !== undefined) images.push(image);
    } else
      leaveOut(
        `tool result part ${type ?? "(no type)"}`,
        "format 1 tool results hold text and images only",
      );
  }
  return { text: texts.join("\n\n"), images };
}

/** Result text Claude Code writes for a tool call the user interrupted. */
export const CLAUDE_CODE_INTERRUPTED_RESULT = "[Request interrupted by user for tool use]";

export interface UserContent {
  /** Text the user typed (joined), for the panel item; undefined for tool results only. */
  readonly text: string | undefined;
  readonly hasImage: boolean;
}

/** A user line's content into the history: tool results to their calls, the rest as user blocks. */
export function addUserContent(
  line: SourceLine,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): UserContent {
  const content = contentOf(line);
  const plain = stringOf(content);
  if (plain !== undefined) {
    builder.user([{ type: "text", text: plain }]);
    return { text: plain, hasImage: false };
  }
  const blocks: Block[] = [];
  const texts: string[] = [];
  let hasImage = false;
  for (const part of arrayOf(content) ?? []) {
    const block = recordOf(part);
    const type = stringOf(field(block, "type"));
    if (block === undefined) continue;
    if (type === "text") {
      const text = stringOf(field(block, "text")) ?? "";
      blocks.push({ type: "text", text });
      texts.push(text);
    } else if (type === "image") {
      const image = imageBlock(block, builder, leaveOut);
      if (image !== undefined) blocks.push(image);
      hasImage = true;
    } else if (type === "tool_result") {
      const callID = stringOf(field(block, "tool_use_id")) ?? "";
      const { text, images } = toolResultContent(block, builder, leaveOut);
      const result: ToolResultBlock = {
        type: "toolResult",
        callID,
        toolName: builder.callName(callID) ?? "",
        isError: field(block, "is_error") === true,
        content: text,
      };
      if (!builder.toolResult(result, images)) {
        leaveOut(
          "tool result without its call",
          "no tool call with this tool_use_id is in the imported history (it is on a part the source did not keep)",
        );
      }
    } else {
      leaveOut(
        `user content block ${type ?? "(no type)"}`,
        "format 1 user messages hold text and images only",
      );
    }
  }
  builder.user(blocks);
  return { text: texts.length === 0 ? undefined : texts.join("\n"), hasImage };
}

function citationsOf(block: JsonRecord): Citation[] | undefined {
  const list = arrayOf(field(block, "citations"));
  if (list === undefined || list.length === 0) return undefined;
  const citations: Citation[] = [];
  for (const entry of list) {
    const record = recordOf(entry);
    const url = stringOf(field(record, "url"));
    if (url === undefined) continue;
    const title = stringOf(field(record, "title"));
    const citedText = stringOf(field(record, "cited_text"));
    citations.push({
      url,
      ...(title === undefined ? {} : { title }),
      ...(citedText === undefined ? {} : { citedText }),
    });
  }
  return citations.length === 0 ? undefined : citations;
}

/** An assistant line's content: history blocks, and panel items with ids `L<line>.<index>`. */
export function addAssistantContent(
  line: SourceLine,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): void {
  const id = (index: number): string => `L${line.line}.${index}`;
  const key = messageIdOf(line) ?? `line-${line.line}`;
  const content = contentOf(line);
  const plain = stringOf(content);
  if (plain !== undefined) {
    builder.assistant(key, [{ type: "text", text: plain }]);
    builder.item({ id: id(0), type: "assistant", text: plain });
    return;
  }
  const blocks: Block[] = [];
  (arrayOf(content) ?? []).forEach((part, index) => {
    const block = recordOf(part);
    if (block === undefined) return;
    const type = stringOf(field(block, "type"));
    if (type === "text") {
      const text = stringOf(field(block, "text")) ?? "";
      const citations = citationsOf(block);
      blocks.push({ type: "text", text });
      builder.item({
        id: id(index),
        type: "assistant",
        text,
        ...(citations === undefined ? {} : { citations }),
      });
    } else if (type === "thinking") {
      builder.item({
        id: id(index),
        type: "thinking",
        text: stringOf(field(block, "thinking")) ?? "",
      });
      if (stringOf(field(block, "signature")) !== undefined)
        leaveOut("thinking signature", SIGNATURE_REASON);
    } else if (type === "redacted_thinking") {
      leaveOut(
        "redacted thinking",
        "encrypted thinking is provider-signed material that format 1 does not keep (A23); it has no readable text",
      );
    } else if (type === "tool_use") {
      const callID = stringOf(field(block, "id")) ?? `toolu_imported_L${line.line}_${index}`;
      if (stringOf(field(block, "id")) === undefined) {
        leaveOut(
          "tool_use id",
          "missing in the source; the import named the call toolu_imported_L<line>_<block>",
        );
      }
      const name = stringOf(field(block, "name")) ?? "";
      const argumentText = compactJson(field(block, "input") ?? {});
      blocks.push({ type: "toolCall", id: callID, name, arguments: argumentText });
      builder.item({
        id: id(index),
        type: "tool",
        name,
        status: "running",
        callID,
        detail: argumentText,
      });
    } else {
      leaveOut(
        `assistant content block ${type ?? "(no type)"}`,
        "format 1 assistant messages hold text and tool calls only",
      );
    }
  });
  builder.assistant(key, blocks);
  const message = messageOf(line);
  const model = stringOf(field(message, "model"));
  if (model !== undefined && model !== "<synthetic>") {
    builder.model = model;
    builder.provider = "anthropic";
  }
  const usage = recordOf(field(message, "usage"));
  if (usage !== undefined) {
    const cacheCreation = recordOf(field(usage, "cache_creation"));
    const oneHour = numberOf(field(cacheCreation, "ephemeral_1h_input_tokens"));
    builder.usage(
      key,
      {
        input: countOf(field(usage, "input_tokens")),
        output: countOf(field(usage, "output_tokens")),
        cacheRead: countOf(field(usage, "cache_read_input_tokens")),
        cacheWrite: countOf(field(usage, "cache_creation_input_tokens")),
        webSearchRequests: countOf(
          field(recordOf(field(usage, "server_tool_use")), "web_search_requests"),
        ),
        ...(oneHour === undefined || oneHour === 0 ? {} : { cacheWrite1h: countOf(oneHour) }),
      },
      // Claude Code's own messages (model <synthetic>) were no model call.
      model === "<synthetic>" ? undefined : { ...(model === undefined ? {} : { model }) },
    );
  }
}
