/**
 * The one schema type of the store: every table, as Kysely sees it, on both dialects. JSON
 * columns (`content`, `metadata`, `result`) travel as JSON text on both databases (SQLite TEXT,
 * PostgreSQL `json`, read back as text by the pool's type parser); times are ISO 8601 UTC text
 * with milliseconds (`2026-01-31T12:00:00.000Z`), which sorts like the time it names.
 *
 * A migration that adds tables (src/store/migrations/) adds their interfaces here and their
 * entries to `StoreSchema`.
 */
import type { Generated } from "kysely";
import type {
  BackgroundAgentJobTable,
  BackgroundAgentJobTurnItemTable,
  BackgroundAgentJobTurnTable,
  BackgroundAgentJobWakeEventTable,
} from "./job-schema.js";
import type {
  BodyChunkTable,
  BodyPackTable,
  BodyPieceTable,
  ChainNodeTable,
  RecordedCallTable,
} from "./recorded-call-schema.js";

/** The applied migrations, one row each (src/store/migrate.ts). */
export interface MigrationTable {
  readonly name: string;
  readonly applied_at: string;
}

/** One stateful gateway conversation. */
export interface GatewayConversationTable {
  readonly id: string;
  readonly subject_uid: string;
  readonly created_at: string;
  /** JSON text: the caller's bounded string pairs (docs/store.md). */
  readonly metadata: string;
  /** Messages it holds, every branch (kept by triggers, migration 0017). */
  readonly message_count: Generated<number>;
  /** When its newest message was written; null with none (kept by triggers, migration 0017). */
  readonly last_message_at: Generated<string | null>;
}

/**
 * A branch: a run of messages with consecutive depths. A conversation's first chain is a root
 * branch (`parent_branch_id` null, `fork_depth` -1); continuing an anchor that already has a
 * continuation starts a new branch that forks off its parent after depth `fork_depth`.
 * `tip_depth` is the depth of the branch's last message.
 */
export interface GatewayBranchTable {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string;
  readonly parent_branch_id: string | null;
  readonly fork_depth: number;
  readonly tip_depth: number;
  readonly created_at: string;
}

/** One message of a conversation (SPEC B3), chained by `previous_message_id`. */
export interface GatewayMessageTable {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string;
  readonly previous_message_id: string | null;
  readonly type: string;
  readonly role: string;
  readonly status: string;
  /** JSON text: the message's blocks (src/history). */
  readonly content: string;
  /** JSON text: `{ "caller": {…}, "gateway": {…} }` (docs/store.md). */
  readonly metadata: string;
  readonly branch_id: string;
  /** Position in the chain: 0 for a chain's first message, previous depth + 1 otherwise. */
  readonly depth: number;
  /** Depth of the first message of this message's model-visible context (a summary or 0). */
  readonly context_start_depth: number;
  readonly created_at: string;
  readonly updated_at: string;
  /**
   * JSON text: the settings of the request that produced a response message (`instructions`,
   * `tools`, `maxOutputTokens`); null for other messages (migration 0005).
   */
  readonly request: string | null;
  /**
   * ISO time until which the server answering an in_progress response holds it (migration
   * 0006); once past, the response is abandoned and any server ends it `incomplete`. Null for
   * messages nobody leases.
   */
  readonly lease_expires_at: string | null;
  /**
   * The server holding the lease of an in_progress response (its id, new at each start;
   * migration 0019): it renews its leases by this id in one statement. Null for other messages.
   */
  readonly lease_holder: string | null;
}

/** A caller's idempotency key and what the first request with it produced. */
export interface GatewayIdempotencyKeyTable {
  readonly subject_uid: string;
  readonly idempotency_key: string;
  readonly operation: string;
  readonly request_sha256: string;
  /** JSON text: the ids the first request produced. */
  readonly result: string;
  readonly created_at: string;
}

/**
 * A tombstone: an id (conversation, response or conversation item) its subject deleted through
 * the API (migration 0008). The deleted rows stay; caller routes answer the id as missing.
 */
export interface GatewayCallerDeletionTable {
  readonly subject_uid: string;
  readonly object_id: string;
  /** `conversation`, `response` or `item`. */
  readonly kind: string;
  readonly deleted_at: string;
}

/**
 * The bytes of an image stored messages show, per subject, named by their SHA-256 (hex) as the
 * messages' `image` blocks name them (migration 0011).
 */
export interface GatewayImageTable {
  readonly subject_uid: string;
  readonly sha256: string;
  readonly mime_type: string;
  readonly byte_count: number;
  /** The bytes as standard base64 with padding. */
  readonly data_base64: string;
  readonly created_at: string;
}

/**
 * A recorded conversation whose history is still to be written as gateway messages (migration
 * 0012: conversations recorded before migration 0010).
 */
export interface HistoryBackfillTable {
  readonly subject_uid: string;
  readonly conversation_id: string;
}

/** A server API key (src/server): only its SHA-256 is stored; it acts for one subject. */
export interface ApiKeyTable {
  readonly key_sha256: string;
  readonly subject_uid: string;
  /** The key's first characters, to recognise it in listings. */
  readonly key_prefix: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/**
 * PostgreSQL only (migration 0018): the rate limits the servers of one database share, one row
 * per limited thing; `tat_ms` is when its bucket is next empty (database clock, ms).
 */
export interface RateLimitTable {
  readonly bucket: string;
  readonly tat_ms: number;
  readonly admitted: boolean;
}

export interface StoreSchema {
  readonly verbatim_migrations: MigrationTable;
  readonly ai_gateway_conversations: GatewayConversationTable;
  readonly ai_gateway_branches: GatewayBranchTable;
  readonly ai_gateway_messages: GatewayMessageTable;
  readonly ai_gateway_idempotency_keys: GatewayIdempotencyKeyTable;
  readonly ai_gateway_caller_deletions: GatewayCallerDeletionTable;
  readonly ai_gateway_images: GatewayImageTable;
  readonly verbatim_api_keys: ApiKeyTable;
  readonly verbatim_rate_limits: RateLimitTable;
  readonly background_agent_jobs: BackgroundAgentJobTable;
  readonly background_agent_job_turns: BackgroundAgentJobTurnTable;
  readonly background_agent_job_turn_items: BackgroundAgentJobTurnItemTable;
  readonly background_agent_job_wake_events: BackgroundAgentJobWakeEventTable;
  readonly ai_gateway_chain_nodes: ChainNodeTable;
  readonly ai_gateway_recorded_calls: RecordedCallTable;
  readonly ai_gateway_body_pieces: BodyPieceTable;
  readonly ai_gateway_body_chunks: BodyChunkTable;
  readonly ai_gateway_body_packs: BodyPackTable;
  readonly ai_gateway_history_backfills: HistoryBackfillTable;
}
