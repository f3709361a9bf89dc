import { base64Decode } from "../../core/bytes.js";
import type { Usage } from "../../format/conversation-schema.js";
import type { Block } from "../../history/message.js";
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

/** Reports the record being read as left out (whole), with what and why. */
export type LeaveOut = (what: string, reason: string) => void;

/** Part types OpenCode keeps for its own bookkeeping: left out whole, with the reason. */
export const LEFT_OUT_PARTS: Readonly<Record<string, string>> = {
  "step-start":
    "marks the start of a model call (with OpenCode's working-tree snapshot hash); the call's content and usage are imported",
  snapshot: "OpenCode's working-tree snapshot hash for its undo, not conversation",
  patch:
    "OpenCode's record of the files a step changed (git hash and paths); the tool calls that changed them are imported",
  agent:
    "an @agent mention of the prompt; OpenCode sends the request as the text part beside it, which is imported",
};

/** The text OpenCode sends the model for a compaction part (MessageV2.toModelMessages). */
export const COMPACTION_PROMPT = "What did we do so far?";

/** A file part's bytes when its URL is a base64 `data:` URL, with the URL's media type. */
function dataUrlBytes(url: string): { bytes: Uint8Array; mime: string } | undefined {
  const match = /^data:([^;,]*)(;[^,]*)?,/.exec(url);
  if (match === null || !(match[2] ?? "").includes(";base64")) return undefined;
  const bytes = base64Decode(url.slice(match[0].length));
  return bytes === undefined ? undefined : { bytes, mime: match[1] ?? "" };
}

/**
 * A file part (an attachment) as a history block: an image with its bytes in a `data:` URL is
 * kept by SHA-256; anything else is left out with the reason (text files reach the model as the
 * synthetic text part OpenCode writes beside them).
 */
export function fileBlock(
  part: JsonRecord,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): Block | undefined {
  const mime = stringOf(field(part, "mime")) ?? "";
  const url = stringOf(field(part, "url")) ?? "";
  const name = stringOf(field(part, "filename")) ?? "file";
  if (mime === "text/plain" || mime === "application/x-directory") {
    leaveOut(
      `file part (${mime})`,
      "OpenCode sends a text file's or folder's content as the synthetic text part beside it, which is imported",
    );
    return undefined;
  }
  if (!mime.startsWith("image/")) {
    leaveOut(
      `file part (${mime || "no media type"})`,
      `format 1 history holds text and images only; the attachment ${name} is not kept`,
    );
    return undefined;
  }
  const data = dataUrlBytes(url);
  if (data === undefined) {
    leaveOut(
      "image file part without its bytes",
      "the image is a reference (not a base64 data: URL), so its bytes are not in the session; kept as an omitted image",
    );
    return {
      type: "imageOmitted",
      mimeType: /^image\/[a-z0-9.+-]+$/.test(mime) ? mime : "image/png",
    };
  }
  return builder.image(data.bytes, mime);
}

/** Token counts of a message or step-finish part in format 1's terms, with its cost. */
export function usageOf(record: JsonRecord): Usage | undefined {
  const tokens = recordOf(field(record, "tokens"));
  if (tokens === undefined) return undefined;
  const cache = recordOf(field(tokens, "cache"));
  const cost = numberOf(field(record, "cost"));
  // OpenCode's input excludes the cached tokens (session getUsage); output is as reported.
  return {
    input: countOf(field(tokens, "input")),
    output: countOf(field(tokens, "output")),
    cacheRead: countOf(field(cache, "read")),
    cacheWrite: countOf(field(cache, "write")),
    webSearchRequests: 0,
    ...(cost === undefined || cost < 0 ? {} : { reportedCost: cost }),
  };
}

/** An error object of OpenCode (`{name, data: {message}}`) as one line. */
export function errorText(error: unknown): string {
  const record = recordOf(error);
  if (record === undefined) return stringOf(error) ?? compactJson(error);
  const name = stringOf(field(record, "name")) ?? "error";
  const message =
    stringOf(field(recordOf(field(record, "data")), "message")) ??
    stringOf(field(record, "message"));
  return message === undefined ? name : `${name}: ${message}`;
}

/** Images a tool returned as attachments (file parts with data: URLs), as history blocks. */
export function attachmentBlocks(
  state: JsonRecord | undefined,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): Block[] {
  const blocks: Block[] = [];
  for (const entry of arrayOf(field(state, "attachments")) ?? []) {
    const attachment = recordOf(entry);
    if (attachment === undefined) continue;
    const block = fileBlock(attachment, builder, leaveOut);
    if (block !== undefined) blocks.push(block);
  }
  return blocks;
}
