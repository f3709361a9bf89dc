import { Buffer } from "node:buffer";
import type { z } from "zod";
import { ConversationElementDecoder } from "./element-decode.js";
import { VerbatimError } from "../core/errors.js";
import {
  decodeJsonBytes,
  formatJsonPath,
  safeParseStrictJson,
  type JsonValue,
} from "../core/strict-json.js";
import {
  FORMAT_VERSION,
  conversationSchema,
  type SavedConversation,
} from "./conversation-schema.js";

/** Why a `conversation.json` cannot be read (A14). */
export interface UnreadableReason {
  readonly kind:
    | "notUtf8"
    | "invalidJson"
    | "notAnObject"
    | "missingVersion"
    | "newerVersion"
    | "otherVersion"
    | "invalidField";
  /** For `invalidField`: what is wrong with the field (docs/format-1.md, "Decoding"). */
  readonly fieldProblem?: FieldProblem;
  /** One sentence: what is wrong and where. */
  readonly message: string;
  /** JSON path of the offending value, when there is one. */
  readonly path?: string;
  /** The `formatVersion` the file declares, when it declares a number. */
  readonly foundVersion?: number;
}

/**
 * - `unknownKey`: a key format 1 does not define at a fixed-schema position;
 * - `missingKey`: a required key is absent;
 * - `unknownType`: an item `type`, block `type` or cost `kind` format 1 does not define;
 * - `wrongType`: a value of the wrong JSON type;
 * - `invalidValue`: the right JSON type with a value format 1 does not allow.
 */
export type FieldProblem =
  "unknownKey" | "missingKey" | "unknownType" | "wrongType" | "invalidValue";

export type DecodeResult =
  | {
      readonly ok: true;
      readonly conversation: SavedConversation;
      /**
       * True when the bytes are exactly the canonical encoding of `conversation` (docs/format-1.md,
       * "Byte rules"), found while decoding; false or absent when they are not, or when the file
       * went through the whole-file decoder, which does not look.
       */
      readonly canonical?: boolean;
    }
  | { readonly ok: false; readonly reason: UnreadableReason };

/**
 * A decoder of format 1: bytes in, the conversation or the reason out. There are three, held to
 * one case table (test/support/decoder-cases.ts, run by format/decoders.test.ts):
 * `decodeWholeFile` (the strict parser and the zod schema: the definition, and every reason),
 * the element-wise decoder behind `decodeConversation` (element-decode.ts, kept for memory) and
 * the quick decoder behind `decodeConversationQuickly` (quick-decode.ts, kept for speed on
 * files up to 8 MiB); the last two use the hand-written check of format 1 (validate.ts) and
 * hand every doubt to the first.
 */
export type ConversationDecoder = (bytes: Uint8Array) => DecodeResult | Promise<DecodeResult>;

function unreadable(reason: UnreadableReason): DecodeResult {
  return { ok: false, reason };
}

/** The value at a path of the parsed document, and whether its last key is present. */
function hasPath(root: JsonValue, path: readonly PropertyKey[]): boolean {
  let value: JsonValue | undefined = root;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || typeof segment === "symbol") return false;
    if (Array.isArray(value)) {
      value = typeof segment === "number" ? value[segment] : undefined;
    } else {
      const key = String(segment);
      if (!Object.hasOwn(value, key)) return false;
      value = value[key];
    }
    if (value === undefined) return false;
  }
  return true;
}

function describeIssue(
  issue: z.core.$ZodIssue,
  root: JsonValue,
): { path: string; message: string; fieldProblem: FieldProblem } {
  const segments = issue.path.map((segment) =>
    typeof segment === "symbol" ? String(segment) : segment,
  );
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    const path = formatJsonPath([...segments, key]);
    return {
      path,
      fieldProblem: "unknownKey",
      message: `${path}: the key ${JSON.stringify(key)} is not defined by format ${FORMAT_VERSION} at this position`,
    };
  }
  const path = formatJsonPath(segments);
  if (
    issue.code === "invalid_union" &&
    "note" in issue &&
    issue.note === "No matching discriminator"
  ) {
    return { path, fieldProblem: "unknownType", message: `${path}: ${issue.message}` };
  }
  if (issue.code === "invalid_type" && !hasPath(root, issue.path)) {
    return {
      path,
      fieldProblem: "missingKey",
      message: `${path}: missing; expected ${issue.expected}`,
    };
  }
  const fieldProblem = issue.code === "invalid_type" ? "wrongType" : "invalidValue";
  return { path, fieldProblem, message: `${path}: ${issue.message}` };
}

/**
 * Decodes the bytes of `agent/conversation.json` (format 1). Never throws for bad input: the
 * result says what is wrong, with the JSON path and what was expected. Corrupt JSON, a repeated
 * key, a wrong type, an unknown item or block type, an undefined key at a fixed-schema position
 * and a `formatVersion` other than 1 are all unreadable.
 */
export function decodeConversation(bytes: Uint8Array): DecodeResult {
  // One value at a time (element-decode.ts), never the whole file as one string; anything it
  // has a doubt about is decided by the whole-file decoder.
  const decoder = new ConversationElementDecoder();
  if (decoder.feed(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
    const conversation = decoder.finish();
    if (conversation !== undefined) {
      return { ok: true, conversation, canonical: decoder.canonical };
    }
  }
  return decodeWholeFile(bytes);
}

/**
 * The whole-file decoder: the file as one string, read by the strict parser and checked by the
 * zod schema. It gives every reason a file is unreadable; `decodeConversation` and the
 * archive's reader use it for every file their element-wise path does not accept.
 */
export function decodeWholeFile(bytes: Uint8Array): DecodeResult {
  const text = decodeJsonBytes(bytes);
  if (!text.ok) {
    const byteOrderMark = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    return unreadable({ kind: byteOrderMark ? "invalidJson" : "notUtf8", message: text.message });
  }
  const parsed = safeParseStrictJson(text.text);
  if (!parsed.ok) {
    const { problem } = parsed;
    return unreadable({
      kind: "invalidJson",
      message: `not valid JSON at line ${problem.line}, column ${problem.column} (${problem.path}): ${problem.message}`,
      path: problem.path,
    });
  }
  const value = parsed.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return unreadable({
      kind: "notAnObject",
      message: "$: expected a JSON object at the top level",
      path: "$",
    });
  }
  if (!Object.hasOwn(value, "formatVersion")) {
    return unreadable({
      kind: "missingVersion",
      message: "$.formatVersion: missing; format 1 files declare it",
      path: "$.formatVersion",
    });
  }
  const version = value["formatVersion"];
  if (version !== FORMAT_VERSION) {
    if (typeof version === "number" && Number.isInteger(version) && version > FORMAT_VERSION) {
      return unreadable({
        kind: "newerVersion",
        message: `$.formatVersion: the file is format ${version}, newer than format ${FORMAT_VERSION}, the newest this version of verbatim reads`,
        path: "$.formatVersion",
        foundVersion: version,
      });
    }
    return unreadable({
      kind: "otherVersion",
      message: `$.formatVersion: expected ${FORMAT_VERSION}, found ${JSON.stringify(version)}`,
      path: "$.formatVersion",
      ...(typeof version === "number" ? { foundVersion: version } : {}),
    });
  }
  const result = conversationSchema.safeParse(value);
  if (!result.success) {
    const first = result.error.issues[0];
    const described: ReturnType<typeof describeIssue> =
      first === undefined
        ? { path: "$", message: "$: invalid", fieldProblem: "invalidValue" }
        : describeIssue(first, value);
    return unreadable({ kind: "invalidField", ...described });
  }
  return { ok: true, conversation: result.data };
}

/**
 * Decodes like `decodeConversation` and throws `unreadable_conversation` (with the reason in
 * `details`) when the file cannot be read. `source` names the file in the message.
 */
export function decodeConversationOrThrow(
  bytes: Uint8Array,
  source = "conversation.json",
): SavedConversation {
  const result = decodeConversation(bytes);
  if (result.ok) return result.conversation;
  const { reason } = result;
  throw new VerbatimError("unreadable_conversation", `${source} is unreadable: ${reason.message}`, {
    ...(reason.path === undefined ? {} : { where: reason.path }),
    hint: "The file is kept as it is; see docs/format-1.md (Decoding) for what format 1 allows",
    details: { ...reason },
  });
}
