import { base64Decode } from "../../core/bytes.js";
import type { Block } from "../../history/message.js";
import type { ConversationBuilder } from "../conversation-builder.js";
import {
  arrayOf,
  compactJson,
  field,
  recordOf,
  stringOf,
  type JsonRecord,
} from "../json-access.js";

/** Records what a record left out (the caller binds file and record number). */
export type LeaveOut = (what: string, reason: string) => void;

/** A `functionCall` part of the Gemini API (`id` is missing in older API versions). */
export interface FunctionCallPart {
  readonly id: string | undefined;
  readonly name: string;
  readonly args: unknown;
}

/** A `functionResponse` part: the output a tool gave the model. */
export interface FunctionResponsePart {
  readonly id: string | undefined;
  readonly name: string;
  readonly response: unknown;
}

/** The parts of a Gemini API `PartListUnion` (a string, a Part, or a list of both), by kind. */
export interface ReadParts {
  /** Text parts that are not thoughts. */
  readonly texts: string[];
  /** Text parts marked `thought: true` (the model's thought summaries). */
  readonly thoughts: string[];
  readonly images: Block[];
  readonly calls: FunctionCallPart[];
  readonly responses: FunctionResponsePart[];
}

const SIGNATURE_REASON =
  "a thought signature is provider-signed material that format 1 does not keep (A23); the thought text is kept as a thinking item";
const MIME_TYPE = /^[a-z]+\/[a-z0-9.+-]+$/;

/**
 * Reads Gemini API parts (a `Content`'s parts, a session message's `content`, a tool call's
 * `result`): text, thoughts, inline images (kept by SHA-256), function calls and responses.
 * Anything else is reported through `leaveOut`.
 */
export function readParts(
  content: unknown,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): ReadParts {
  const read: ReadParts = { texts: [], thoughts: [], images: [], calls: [], responses: [] };
  const list = arrayOf(content) ?? (content === undefined || content === null ? [] : [content]);
  for (const entry of list) {
    const direct = stringOf(entry);
    if (direct !== undefined) {
      read.texts.push(direct);
      continue;
    }
    const part = recordOf(entry);
    if (part === undefined) {
      leaveOut("part that is not an object", "a Gemini API part is an object or a string");
      continue;
    }
    addPart(part, read, builder, leaveOut);
  }
  return read;
}

function addPart(
  part: JsonRecord,
  read: ReadParts,
  builder: ConversationBuilder,
  leaveOut: LeaveOut,
): void {
  if (stringOf(field(part, "thoughtSignature")) !== undefined)
    leaveOut("thought signature", SIGNATURE_REASON);
  const text = stringOf(field(part, "text"));
  const inline = recordOf(field(part, "inlineData"));
  const call = recordOf(field(part, "functionCall"));
  const response = recordOf(field(part, "functionResponse"));
  if (text !== undefined) {
    if (field(part, "thought") === true) read.thoughts.push(text);
    else read.texts.push(text);
  } else if (inline !== undefined) {
    read.images.push(inlineImage(inline, builder, leaveOut));
  } else if (call !== undefined) {
    read.calls.push({
      id: stringOf(field(call, "id")),
      name: stringOf(field(call, "name")) ?? "",
      args: field(call, "args"),
    });
  } else if (response !== undefined) {
    read.responses.push({
      id: stringOf(field(response, "id")),
      name: stringOf(field(response, "name")) ?? "",
      response: field(response, "response"),
    });
  } else if (field(part, "fileData") !== undefined) {
    leaveOut(
      "fileData part",
      "a file by reference (a URI): its bytes are not in the session file, and format 1 messages hold text and images only",
    );
  } else if (stringOf(field(part, "thoughtSignature")) === undefined) {
    const kind = Object.keys(part)[0] ?? "(empty)";
    leaveOut(`${kind} part`, "format 1 messages hold text, images and tool calls only");
  }
}

/** An `inlineData` part: an image kept by SHA-256, any other data reported left out. */
function inlineImage(inline: JsonRecord, builder: ConversationBuilder, leaveOut: LeaveOut): Block {
  const mimeType = stringOf(field(inline, "mimeType")) ?? "";
  const bytes = base64Decode(stringOf(field(inline, "data")) ?? "");
  if (mimeType.startsWith("image/") && MIME_TYPE.test(mimeType) && bytes !== undefined)
    return builder.image(bytes, mimeType);
  leaveOut(
    mimeType.startsWith("image/") ? "image with unreadable data" : `inline data (${mimeType})`,
    mimeType.startsWith("image/")
      ? "its base64 data or media type is not valid in the file; it is kept as an omitted image"
      : "format 1 messages hold text and images only; it is kept as an omitted image",
  );
  return { type: "imageOmitted", mimeType: MIME_TYPE.test(mimeType) ? mimeType : "image/png" };
}

/**
 * The text a tool's `response` object holds: Gemini CLI writes `{output}` for a result and
 * `{error}` for a failure (a cancelled call included); anything else is kept as compact JSON.
 */
export function responseText(response: unknown): { text: string; isError: boolean } {
  const record = recordOf(response);
  const output = stringOf(field(record, "output"));
  const error = stringOf(field(record, "error"));
  if (error !== undefined && output === undefined) return { text: error, isError: true };
  if (output !== undefined && Object.keys(record ?? {}).length === 1)
    return { text: output, isError: false };
  const direct = stringOf(response);
  if (direct !== undefined) return { text: direct, isError: false };
  return { text: compactJson(response ?? {}), isError: error !== undefined };
}
