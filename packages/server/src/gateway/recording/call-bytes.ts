import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/database.js";
import {
  findRecordedCall,
  findRecordedCallOwner,
  type RecordedCallRow,
} from "../../store/repositories/recorded-calls.js";
import { BodyReader } from "./bodies/body-reader.js";
import type { BodyReadCache } from "./bodies/read-cache.js";

/** What `GET /ai-gateway/recorded-calls/:id` answers: a recorded call's facts, not its bodies. */
export interface RecordedCallFacts {
  readonly id: string;
  readonly subject_uid: string;
  /** The conversation its messages were placed in; null until the call is placed. */
  readonly conversation_id: string | null;
  /** The call of the chain this one extends. */
  readonly previous_call_id: string | null;
  /** `anthropic-messages` or `openai-chat`. */
  readonly wire_format: string;
  /** The request path with its query, as sent. */
  readonly path: string;
  readonly model: string;
  /** The upstream's status. */
  readonly status_code: number;
  readonly created_at: string;
  readonly duration_ms: number;
  /** Both bodies went through the trajectory sanitizer before they were stored. */
  readonly redacted: boolean;
  /** The request's headers as recorded: credentials are never stored. */
  readonly request_headers: Readonly<Record<string, string>>;
  /** The upstream's response headers as recorded. */
  readonly response_headers: Readonly<Record<string, string>>;
  readonly usage: {
    readonly input_tokens: number | null;
    readonly output_tokens: number | null;
    readonly cache_read_tokens: number | null;
    readonly cache_write_tokens: number | null;
  };
  /** Messages of the request, and how many of them were already stored. */
  readonly message_count: number;
  readonly matched_count: number;
  /** The bodies' sizes in bytes, as sent and as received (still content-encoded). */
  readonly request_bytes: number;
  readonly response_bytes: number;
  /** Where the exact bytes are. */
  readonly links: { readonly request: string; readonly response: string };
}

/** A call's cache verdict against its previous call (the cache report's entry for it). */
export interface CallCacheVerdict {
  readonly status: "first" | "kept" | "broken" | "unreadable";
  readonly hit_ratio: number | null;
  readonly lost_tokens: number;
  readonly lost_dollars: number | null;
  readonly difference: {
    readonly path: string;
    readonly reason: string;
    readonly message_index: number | null;
    readonly before: string;
    readonly after: string;
  } | null;
}

/** A recorded body: its exact bytes, with the content type and encoding it was sent with. */
export interface RecordedBody {
  readonly bytes: Buffer;
  readonly contentType: string;
  /** The response's `content-encoding` (its bytes are kept encoded, as received). */
  readonly contentEncoding?: string;
}

/** The route of a recorded call's facts, and of its bodies below it. */
export function recordedCallPath(id: string): string {
  return `/ai-gateway/recorded-calls/${encodeURIComponent(id)}`;
}

/**
 * A recorded call by id, for the operator's routes (given the id alone): its owner found first
 * (one lookup across subjects), then the call read naming it; `resource_not_found` when there
 * is none.
 */
export async function readRecordedCall(
  database: StoreDatabase,
  id: string,
): Promise<RecordedCallRow> {
  const owner = await findRecordedCallOwner(database.db, id);
  const row = owner === undefined ? undefined : await findRecordedCall(database.db, owner, id);
  if (row === undefined) {
    throw new VerbatimError("resource_not_found", `no recorded call ${id}`, {
      where: id,
      hint: "Recorded calls are listed in a conversation's cache report (GET /ai-gateway/conversations/:id/cache)",
    });
  }
  return row;
}

/** The stored JSON of a headers column as a record (an unreadable one as none). */
function headersOf(text: string): Record<string, string> {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (typeof value === "string") headers[name] = value;
      else if (Array.isArray(value)) headers[name] = value.map(String).join(", ");
    }
    return headers;
  } catch {
    return {};
  }
}

/** A header by name, whatever its case. */
function headerOf(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers))
    if (key.toLowerCase() === wanted) return value;
  return undefined;
}

export function recordedCallFacts(row: RecordedCallRow): RecordedCallFacts {
  const path = recordedCallPath(row.id);
  return {
    id: row.id,
    subject_uid: row.subject_uid,
    conversation_id: row.conversation_id === "" ? null : row.conversation_id,
    previous_call_id: row.previous_call_id,
    wire_format: row.wire_format,
    path: row.path,
    model: row.model,
    status_code: row.status_code,
    created_at: row.created_at,
    duration_ms: row.duration_ms,
    redacted: row.redacted === 1,
    request_headers: headersOf(row.request_headers),
    response_headers: headersOf(row.response_headers),
    usage: {
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
      cache_read_tokens: row.cache_read_tokens,
      cache_write_tokens: row.cache_write_tokens,
    },
    message_count: row.message_count,
    matched_count: row.matched_count,
    request_bytes: row.request_size ?? Buffer.byteLength(row.request_body, "utf8"),
    response_bytes: row.response_size ?? Buffer.byteLength(row.response_body_base64, "base64"),
    links: { request: `${path}/request`, response: `${path}/response` },
  };
}

/**
 * The request body as the client sent it, with its content type; `cache`: the requests its
 * caller read lately (read-cache.ts).
 */
export async function recordedRequest(
  database: StoreDatabase,
  row: RecordedCallRow,
  cache?: BodyReadCache,
): Promise<RecordedBody> {
  return {
    bytes: await new BodyReader(database.db, cache).request(row),
    contentType: headerOf(headersOf(row.request_headers), "content-type") ?? "application/json",
  };
}

/** The response body as the upstream sent it (still content-encoded), with its headers. */
export async function recordedResponse(
  database: StoreDatabase,
  row: RecordedCallRow,
): Promise<RecordedBody> {
  const headers = headersOf(row.response_headers);
  const encoding = headerOf(headers, "content-encoding");
  return {
    bytes: await new BodyReader(database.db).response(row),
    contentType: headerOf(headers, "content-type") ?? "application/octet-stream",
    ...(encoding === undefined ? {} : { contentEncoding: encoding }),
  };
}
