import type { z } from "zod";
import { decodeJsonBytes, formatJsonPath, safeParseStrictJson } from "../core/strict-json.js";
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
  /** One sentence: what is wrong and where. */
  readonly message: string;
  /** JSON path of the offending value, when there is one. */
  readonly path?: string;
  /** The `formatVersion` the file declares, when it declares a number. */
  readonly foundVersion?: number;
}

export type DecodeResult =
  | { readonly ok: true; readonly conversation: SavedConversation }
  | { readonly ok: false; readonly reason: UnreadableReason };

function unreadable(reason: UnreadableReason): DecodeResult {
  return { ok: false, reason };
}

function describeIssue(issue: z.core.$ZodIssue): { path: string; message: string } {
  const path = formatJsonPath(
    issue.path.map((segment) => (typeof segment === "symbol" ? String(segment) : segment)),
  );
  return { path, message: `${path}: ${issue.message}` };
}

/**
 * Decodes the bytes of `agent/conversation.json` (format 1). Never throws for bad input: the
 * result says what is wrong, with the JSON path and what was expected. Corrupt JSON, a repeated
 * key, a wrong type, an unknown item or block type, an undefined key at a fixed-schema position
 * and a `formatVersion` other than 1 are all unreadable.
 */
export function decodeConversation(bytes: Uint8Array): DecodeResult {
  const text = decodeJsonBytes(bytes);
  if (!text.ok) return unreadable({ kind: "notUtf8", message: text.message });
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
    const described =
      first === undefined ? { path: "$", message: "$: invalid" } : describeIssue(first);
    return unreadable({ kind: "invalidField", message: described.message, path: described.path });
  }
  return { ok: true, conversation: result.data };
}
