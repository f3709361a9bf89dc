import type { Item } from "../format/index.js";
import type { Usage } from "../pricing/types.js";

/**
 * What a CLI stream parser reports while it reads a run's output. Items are keyed by their
 * panel `id`: an `item` event with an id seen before replaces that item (a tool that finishes,
 * a web search that gets its query, a to-do list that changes).
 */
export type AgentStreamEvent =
  /** The CLI's own session (Claude Code) or thread (Codex) id, to resume on the next turn. */
  | { readonly type: "session"; readonly id: string }
  /** A panel item to add, or to replace when its id was reported before. */
  | { readonly type: "item"; readonly item: Item }
  /** Text the model answered, for the history's assistant message. */
  | { readonly type: "assistantText"; readonly text: string }
  /**
   * The turn's usage as the CLI reports it: `usage` for the whole turn, `lastRound` for its last
   * model request when the CLI tells it apart.
   */
  | { readonly type: "usage"; readonly usage: Usage; readonly lastRound?: Usage }
  /** Whether the CLI runs on a subscription (`notBilled`) or on a key that it prices. */
  | { readonly type: "billing"; readonly subscription: boolean }
  /** The CLI finished the turn; `ok` is false when it reported the turn as failed. */
  | { readonly type: "turnEnd"; readonly ok: boolean };

/** A parser of one CLI's JSON-lines stream, fed line by line; never throws on what it reads. */
export interface AgentStreamParser {
  /** Reads one line of standard output. */
  push(line: string): AgentStreamEvent[];
  /** Whether a line could not be read as a JSON object (the first such line, shortened). */
  readonly malformedLine: string | undefined;
  /** Whether the stream reported the end of the turn (success or failure). */
  readonly sawTurnEnd: boolean;
}

/** Makes panel item ids: the conversation's own allocator, or a fallback for tests. */
export type ItemIdFactory = () => string;

/** A JSON object read from a line, with helpers that never throw on unexpected shapes. */
export type Fields = Readonly<Record<string, unknown>>;

/**
 * Reads a line as a JSON object. Plain `JSON.parse` on purpose: Codex writes objects that
 * repeat a key (a `web_search` item carries `id` twice: the item id, then the search id), which
 * the strict parser rightly refuses for files. The parsed value is only ever read field by field
 * here, never merged into other objects, so a `__proto__` key cannot reach a prototype.
 */
export function parseJsonLine(line: string): Fields | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return isFields(value) ? value : undefined;
}

export function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function stringField(fields: Fields | undefined, key: string): string | undefined {
  const value =
    fields === undefined ? undefined : Object.hasOwn(fields, key) ? fields[key] : undefined;
  return typeof value === "string" ? value : undefined;
}

export function numberField(fields: Fields | undefined, key: string): number | undefined {
  const value =
    fields === undefined ? undefined : Object.hasOwn(fields, key) ? fields[key] : undefined;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function objectField(fields: Fields | undefined, key: string): Fields | undefined {
  const value =
    fields === undefined ? undefined : Object.hasOwn(fields, key) ? fields[key] : undefined;
  return isFields(value) ? value : undefined;
}

export function arrayField(fields: Fields | undefined, key: string): readonly unknown[] {
  const value =
    fields === undefined ? undefined : Object.hasOwn(fields, key) ? fields[key] : undefined;
  return Array.isArray(value) ? value : [];
}

export function booleanField(fields: Fields | undefined, key: string): boolean | undefined {
  const value =
    fields === undefined ? undefined : Object.hasOwn(fields, key) ? fields[key] : undefined;
  return typeof value === "boolean" ? value : undefined;
}

/** Text for an item's `detail`: long tool output is cut to its first 8,000 characters. */
export function detailText(text: string): string {
  const limit = 8000;
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n… (${text.length - limit} more characters not shown)`;
}

/** One line of a short summary (a command, a path, arguments), cut to 200 characters. */
export function summaryText(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= 200 ? line : `${line.slice(0, 199)}…`;
}

/** A line quoted in a message: at most 200 characters. */
export function quoteLine(line: string): string {
  return line.length <= 200 ? line : `${line.slice(0, 200)}…`;
}
