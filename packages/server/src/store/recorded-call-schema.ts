import type { ColumnType, Generated } from "kysely";

/** A nullable column an insert may leave out. */
type Optional<T> = ColumnType<T, T | undefined, T>;

/** Tables of migration 0009 (docs/server/recorded-calls.md, "Recorded calls"). */

/** One message prefix of a subject's recorded chains. */
export interface ChainNodeTable {
  readonly subject_uid: string;
  /** Hash of the parent's prefix hash and this message's normalised hash (gateway/chain-matching). */
  readonly prefix_sha256: string;
  readonly conversation_id: string;
  readonly parent_prefix_sha256: string | null;
  /** 0 for a chain's first message. */
  readonly position: number;
  readonly message_sha256: string;
  readonly created_at: string;
  /** The stored gateway message holding this unit (migration 0010; null before). */
  readonly message_id: string | null;
  /** The deepest stored message this prefix covers whole: what a match here continues. */
  readonly anchor_message_id: string | null;
  /** Units the chain of `anchor_message_id` covers (0 with no anchor). */
  readonly anchor_count: number | null;
}

/** One model call through a pass-through route, byte for byte. */
export interface RecordedCallTable {
  readonly id: string;
  readonly subject_uid: string;
  /**
   * Empty while only the call's bytes are stored: its place in a chain (conversation, nodes,
   * gateway messages, previous call, usage) is written just after its answer
   * (gateway/recording/calls.ts); until then `tip_prefix_sha256` is empty and the usage null.
   */
  readonly conversation_id: string;
  /** `anthropic-messages`, `openai-chat` or `gemini-generate-content`. */
  readonly wire_format: string;
  /** The request path with its query (`/v1/messages?beta=true`). */
  readonly path: string;
  readonly model: string;
  /** Prefix hash of the request's last message. */
  readonly tip_prefix_sha256: string;
  readonly message_count: number;
  /** Messages of the request that were already stored. */
  readonly matched_count: number;
  /** The call of the chain this one extends (the deepest stored call on its prefix). */
  readonly previous_call_id: string | null;
  readonly status_code: number;
  /** JSON text: the request headers without credentials. */
  readonly request_headers: string;
  /** The request body as sent (or sanitized, `redacted` 1); '' when `body_storage` is 1. */
  readonly request_body: string;
  /** JSON text: the upstream's response headers. */
  readonly response_headers: string;
  /** The upstream's response bytes as sent (still content-encoded), base64; '' when `body_storage` is 1. */
  readonly response_body_base64: string;
  /** 1 when both bodies went through the sanitizer. */
  readonly redacted: number;
  readonly input_tokens: number | null;
  readonly output_tokens: number | null;
  readonly cache_read_tokens: number | null;
  readonly cache_write_tokens: number | null;
  readonly duration_ms: number;
  readonly created_at: string;
  /**
   * 0: the bodies are in `request_body` and `response_body_base64` (rows written before
   * migration 0015, until `verbatim db migrate` converts them); 1: in pieces, by manifest.
   */
  readonly body_storage: Generated<number>;
  /** The request body's manifest (gateway/recording/bodies/manifest.ts). */
  readonly request_manifest: Optional<Buffer | null>;
  /** The call whose request body `request_manifest` is a diff of. */
  readonly request_base_call_id: Optional<string | null>;
  readonly response_manifest: Optional<Buffer | null>;
  /** The bodies' sizes in bytes (null with `body_storage` 0). */
  readonly request_size: Optional<number | null>;
  readonly response_size: Optional<number | null>;
  /**
   * PostgreSQL: the order the calls were kept in, from one sequence of the database (migration
   * 0019; null on SQLite and for calls placed before it): unplaced calls are placed in it.
   */
  readonly kept_order: Generated<number | null>;
}

/** A run of recorded bytes of one subject (migration 0015). */
export interface BodyPieceTable {
  readonly id: number;
  readonly subject_uid: string;
  /** gateway/recording/bodies/compression.ts: 0 none, 1 zstd, 2 brotli, 3 gzip. */
  readonly codec: number;
  /** Its bytes before compression. */
  readonly size: number;
  readonly bytes: Buffer;
  readonly created_at: string;
}

/**
 * Small pieces of one subject joined into one compressed frame (migration 0020); its pieces keep
 * their ids, and its id is the largest of them.
 */
export interface BodyPackTable {
  readonly id: number;
  readonly subject_uid: string;
  /** As a piece's `codec`. */
  readonly codec: number;
  /** Its bytes before compression: its pieces' sizes added up. */
  readonly size: number;
  /** Its oldest piece's. */
  readonly created_at: string;
  /** Its pieces in id order with their sizes (gateway/recording/bodies/pack-list.ts). */
  readonly pieces: Buffer;
  readonly bytes: Buffer;
}

/** Where a subject holds a content-defined chunk (migration 0015). */
export interface BodyChunkTable {
  readonly subject_uid: string;
  /** The first 16 bytes of its SHA-256. */
  readonly hash: Buffer;
  readonly piece_id: number;
  readonly piece_offset: number;
}
