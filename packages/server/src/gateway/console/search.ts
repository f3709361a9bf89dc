import type { StoreDatabase } from "../../store/database.js";
import { searchConsole, type SearchKey } from "../../store/repositories/console-search.js";
import { decodeKeyCursor, encodeKeyCursor } from "./cursor.js";

/** Fields whose values are labels or digests, not text a person wrote (left out of snippets). */
const NOT_TEXT = new Set(["type", "sha256", "mimeType", "execution_mechanism", "status", "kind"]);

/** The text of a stored JSON value: its strings (labels and digests left out), joined by spaces. */
function textOf(json: string): string {
  const strings: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === "string") strings.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === "object" && value !== null) {
      for (const [key, one] of Object.entries(value)) if (!NOT_TEXT.has(key)) walk(one);
    }
  };
  try {
    walk(JSON.parse(json));
  } catch {
    return json;
  }
  return strings.join(" ");
}

export function snippetOf(json: string, query: string): string {
  const text = textOf(json);
  const at = text.toLowerCase().indexOf(query.toLowerCase());
  const start = Math.max(0, (at < 0 ? 0 : at) - 60);
  const characters = [...text.slice(start, start + 200)].slice(0, 160).join("");
  return `${start > 0 ? "…" : ""}${characters}${start + characters.length < text.length ? "…" : ""}`;
}

/** A search of the console: the text, and a page of the results. */
export interface SearchQuery {
  readonly query: string;
  readonly limit: number;
  /**
   * next_cursor of the previous page; none for the first. It holds the last match's key alone,
   * like the lists' cursors: it continues the search given with the same query and subject.
   */
  readonly cursor?: string | undefined;
  /** Only this subject's messages and items (its uid, exactly); none: every subject's. */
  readonly subjectUid?: string | undefined;
}

/** A match as the console answers it: a message of a conversation, or an item of a job. */
export interface SearchMatch {
  readonly kind: "message" | "item";
  readonly conversation_id: string | null;
  readonly message_id: string | null;
  readonly job_id: string | null;
  readonly turn_id: string | null;
  readonly item_key: string | null;
  readonly subject_uid: string;
  readonly created_at: string;
  readonly snippet: string;
}

export interface SearchPage {
  readonly data: SearchMatch[];
  readonly next_cursor: string | null;
}

/**
 * Full-text search across every conversation's messages and every job's items, or one
 * subject's (docs/console.md, "Search"), newest first, paged.
 */
export async function searchMessagesAndItems(
  database: StoreDatabase,
  search: SearchQuery,
): Promise<SearchPage> {
  const { query, limit, subjectUid } = search;
  const key = decodeKeyCursor(search.cursor, 4);
  const rows = await searchConsole(database.db, database.capabilities, {
    query,
    limit: limit + 1,
    after: key === undefined ? undefined : ([key[0], key[1], key[2], key[3]] as SearchKey),
    subjectUid,
  });
  const last = rows[limit - 1];
  return {
    data: rows.slice(0, limit).map((row) => ({
      kind: row.kind,
      conversation_id: row.kind === "message" ? row.parent_id : null,
      message_id: row.kind === "message" ? row.id : null,
      job_id: row.kind === "item" ? row.parent_id : null,
      turn_id: row.turn_id,
      item_key: row.kind === "item" ? row.id : null,
      subject_uid: row.subject_uid,
      created_at: row.created_at,
      snippet: snippetOf(row.body, query),
    })),
    next_cursor:
      rows.length > limit && last !== undefined
        ? encodeKeyCursor([last.created_at, last.parent_id, last.id, last.kind])
        : null,
  };
}
