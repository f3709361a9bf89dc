import { arrayOf, field, recordOf, stringOf, type JsonRecord } from "../json-access.js";
import type { SourceLine } from "../jsonl.js";

/** Typed access to the fields of a Claude Code session line (any version seen, 1.0 to 2.1). */
export function lineType(line: SourceLine): string {
  return stringOf(field(line.value, "type")) ?? "(no type)";
}

export function uuidOf(line: SourceLine): string | undefined {
  return stringOf(field(line.value, "uuid"));
}

export function parentOf(line: SourceLine): string | undefined {
  return stringOf(field(line.value, "parentUuid"));
}

/** The parent across a compaction boundary (`compact_boundary` lines have a null parentUuid). */
export function logicalParentOf(line: SourceLine): string | undefined {
  return stringOf(field(line.value, "logicalParentUuid"));
}

export function isSidechain(line: SourceLine): boolean {
  return field(line.value, "isSidechain") === true;
}

export function agentIdOf(line: SourceLine): string | undefined {
  return stringOf(field(line.value, "agentId"));
}

export function sessionIdOf(line: SourceLine): string | undefined {
  return stringOf(field(line.value, "sessionId"));
}

export function messageOf(line: SourceLine): JsonRecord | undefined {
  return recordOf(field(line.value, "message"));
}

/** The API message id (assistant lines of one response share it, one line per block). */
export function messageIdOf(line: SourceLine): string | undefined {
  return stringOf(field(messageOf(line), "id"));
}

export function contentOf(line: SourceLine): unknown {
  return field(messageOf(line), "content");
}

export function isMessageLine(line: SourceLine): boolean {
  const type = lineType(line);
  return (type === "user" || type === "assistant") && messageOf(line) !== undefined;
}

/** The tool_use_ids of a user line made of tool results only (undefined otherwise). */
export function toolResultIdsOnly(line: SourceLine): string[] | undefined {
  if (lineType(line) !== "user") return undefined;
  const blocks = arrayOf(contentOf(line));
  if (blocks === undefined || blocks.length === 0) return undefined;
  const ids: string[] = [];
  for (const block of blocks) {
    const record = recordOf(block);
    if (stringOf(field(record, "type")) !== "tool_result") return undefined;
    const id = stringOf(field(record, "tool_use_id"));
    if (id === undefined) return undefined;
    ids.push(id);
  }
  return ids;
}

/** The ids of the tool_use blocks of an assistant line. */
export function toolUseIds(line: SourceLine): string[] {
  if (lineType(line) !== "assistant") return [];
  const ids: string[] = [];
  for (const block of arrayOf(contentOf(line)) ?? []) {
    const record = recordOf(block);
    const id = stringOf(field(record, "id"));
    if (stringOf(field(record, "type")) === "tool_use" && id !== undefined) ids.push(id);
  }
  return ids;
}
