import { sql, type Kysely, type Selectable } from "kysely";
import type { BodyChunkTable, BodyPieceTable } from "../recorded-call-schema.js";
import type { DialectCapabilities } from "../capabilities.js";
import type { StoreSchema } from "../schema.js";

/**
 * Rows of recorded bodies (migration 0015): pieces, the chunk index, and the manifests of
 * calls. These only read and write rows; gateway/recording/bodies/ decides.
 */

/** Ids per statement: well under both databases' limits on bound parameters. */
const IDS_PER_STATEMENT = 1000;

export type PieceRow = Selectable<BodyPieceTable>;
export type ChunkRow = Selectable<BodyChunkTable>;

/**
 * `count` new piece ids. SQLite: after the largest, inside the caller's write transaction (one
 * writer at a time). PostgreSQL: from the sequence, in any transaction.
 */
export async function newPieceIds(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  count: number,
): Promise<number[]> {
  if (count === 0) return [];
  if (capabilities.dialect === "sqlite") {
    const row = await db
      .selectFrom("ai_gateway_body_pieces")
      .select((select) => select.fn.max("id").as("id"))
      .executeTakeFirst();
    const last = Number(row?.id ?? 0);
    return Array.from({ length: count }, (_, index) => last + 1 + index);
  }
  const { rows } = await sql<{
    id: string;
  }>`select nextval('ai_gateway_body_piece_ids') as id from generate_series(1, ${count})`.execute(
    db,
  );
  return rows.map((row) => Number(row.id));
}

export async function insertPieces(
  db: Kysely<StoreSchema>,
  rows: readonly PieceRow[],
): Promise<void> {
  // One piece per statement: a long body's pieces are each a large value.
  for (const row of rows) await db.insertInto("ai_gateway_body_pieces").values(row).execute();
}

export async function insertChunks(
  db: Kysely<StoreSchema>,
  rows: readonly ChunkRow[],
): Promise<void> {
  const perStatement = Math.floor(IDS_PER_STATEMENT / 4);
  for (let start = 0; start < rows.length; start += perStatement) {
    await db
      .insertInto("ai_gateway_body_chunks")
      .values(rows.slice(start, start + perStatement))
      .onConflict((conflict) => conflict.columns(["subject_uid", "hash"]).doNothing())
      .execute();
  }
}

/** The subject's chunks among `hashes`. */
export async function findChunks(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  hashes: readonly Buffer[],
): Promise<ChunkRow[]> {
  const out: ChunkRow[] = [];
  for (let start = 0; start < hashes.length; start += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom("ai_gateway_body_chunks")
      .selectAll()
      .where("subject_uid", "=", subjectUid)
      .where("hash", "in", hashes.slice(start, start + IDS_PER_STATEMENT))
      .execute();
    for (const row of rows) out.push({ ...row, piece_id: Number(row.piece_id) });
  }
  return out;
}

/** The subject's pieces among `ids` (fewer when some are gone). */
export async function readPieces(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly number[],
): Promise<PieceRow[]> {
  const out: PieceRow[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom("ai_gateway_body_pieces")
      .selectAll()
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT))
      .execute();
    for (const row of rows) out.push({ ...row, id: Number(row.id) });
  }
  return out;
}

/** How many of the subject's pieces among `ids` exist, locked against deletion (PostgreSQL). */
export async function countPieces(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  ids: readonly number[],
): Promise<number> {
  let found = 0;
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    let query = db
      .selectFrom("ai_gateway_body_pieces")
      .select("id")
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT));
    if (capabilities.dialect === "postgres") query = query.forKeyShare();
    found += (await query.execute()).length;
  }
  return found;
}

/** Whether a call exists, locked against deletion until the transaction ends (PostgreSQL). */
export async function lockCall(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  id: string,
): Promise<boolean> {
  let query = db.selectFrom("ai_gateway_recorded_calls").select("id").where("id", "=", id);
  if (capabilities.dialect === "postgres") query = query.forKeyShare();
  return (await query.executeTakeFirst()) !== undefined;
}

export interface ManifestLink {
  readonly id: string;
  readonly request_base_call_id: string | null;
  readonly request_manifest: Buffer | null;
}

/**
 * A call's request manifest and those of the calls it diffs against, the call's own first,
 * following `request_base_call_id` at most `limit` steps.
 */
export async function readManifestChain(
  db: Kysely<StoreSchema>,
  id: string,
  limit: number,
): Promise<ManifestLink[]> {
  const { rows } = await sql<ManifestLink & { step: number }>`
    with recursive chain(id, request_base_call_id, request_manifest, step) as (
      select id, request_base_call_id, request_manifest, 0
      from ai_gateway_recorded_calls where id = ${id}
      union all
      select c.id, c.request_base_call_id, c.request_manifest, chain.step + 1
      from ai_gateway_recorded_calls c join chain on c.id = chain.request_base_call_id
      where chain.step < ${limit}
    )
    select id, request_base_call_id, request_manifest, step from chain order by step`.execute(db);
  return rows.map(({ id: callId, request_base_call_id, request_manifest }) => ({
    id: callId,
    request_base_call_id,
    request_manifest,
  }));
}

/**
 * Up to `limit` calls whose bodies are still in the old columns (`body_storage` 0), oldest
 * first; on PostgreSQL locked for the transaction, skipping those another process holds.
 */
export async function claimOldBodyCalls(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  limit: number,
): Promise<string[]> {
  let query = db
    .selectFrom("ai_gateway_recorded_calls")
    .select("id")
    .where("body_storage", "=", 0)
    .orderBy("id")
    .limit(limit);
  if (capabilities.dialect === "postgres") query = query.forUpdate().skipLocked();
  return (await query.execute()).map((row) => row.id);
}

/** The columns of a call's bodies stored as pieces (the old columns emptied). */
export interface PieceBodyColumns {
  readonly body_storage: number;
  readonly request_manifest: Buffer;
  readonly request_base_call_id: string | null;
  readonly response_manifest: Buffer;
  readonly request_size: number;
  readonly response_size: number;
}

/** Writes a call's bodies as pieces, if they are still in the old form; false when not. */
export async function setPieceBodies(
  db: Kysely<StoreSchema>,
  id: string,
  columns: PieceBodyColumns,
): Promise<boolean> {
  const result = await db
    .updateTable("ai_gateway_recorded_calls")
    .set({ ...columns, request_body: "", response_body_base64: "" })
    .where("id", "=", id)
    .where("body_storage", "=", 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** How many calls still keep their bodies in the old columns. */
export async function countOldBodyCalls(db: Kysely<StoreSchema>): Promise<number> {
  const row = await db
    .selectFrom("ai_gateway_recorded_calls")
    .select((select) => select.fn.countAll<string | number>().as("count"))
    .where("body_storage", "=", 0)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** A piece as packing weighs it (its bytes not read). */
export interface PieceFacts {
  readonly id: number;
  readonly size: number;
  readonly created_at: string;
}

/**
 * The subject's pieces from id `fromId` of fewer than `smallerThan` bytes (before compression)
 * stored before `before`, in id order, at most `limit`: what packing may join into packs.
 */
export async function smallPieces(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  filter: { readonly smallerThan: number; readonly before: string; readonly fromId: number },
  limit: number,
): Promise<PieceFacts[]> {
  const rows = await db
    .selectFrom("ai_gateway_body_pieces")
    .select(["id", "size", "created_at"])
    .where("subject_uid", "=", subjectUid)
    .where("id", ">=", filter.fromId)
    .where("size", "<", filter.smallerThan)
    .where("created_at", "<", filter.before)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: Number(row.id), size: row.size, created_at: row.created_at }));
}

/** The subject's pieces among `ids`, locked against other writers until the transaction ends (PostgreSQL). */
export async function readPiecesForUpdate(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  ids: readonly number[],
): Promise<PieceRow[]> {
  const out: PieceRow[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    let query = db
      .selectFrom("ai_gateway_body_pieces")
      .selectAll()
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT))
      .orderBy("id");
    if (capabilities.dialect === "postgres") query = query.forUpdate();
    for (const row of await query.execute()) out.push({ ...row, id: Number(row.id) });
  }
  return out;
}

/** Points the chunks of piece `from` at piece `to`, `shift` bytes further in. */
export async function moveChunks(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  from: number,
  to: number,
  shift: number,
): Promise<void> {
  await db
    .updateTable("ai_gateway_body_chunks")
    .set((update) => ({
      piece_id: to,
      piece_offset: sql<number>`${update.ref("piece_offset")} + ${shift}`,
    }))
    .where("subject_uid", "=", subjectUid)
    .where("piece_id", "=", from)
    .execute();
}

/**
 * The manifests of the subject's calls kept since `since` (stored as pieces). The subject is a
 * condition no index is chosen for: the calls of the last minutes are few, the subject's many.
 */
export async function manifestsSince(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  since: string,
): Promise<{ id: string; request_manifest: Buffer | null; response_manifest: Buffer | null }[]> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["id", "request_manifest", "response_manifest"])
    .where(sql<string>`${sql.ref("subject_uid")} || ''`, "=", subjectUid)
    .where("created_at", ">=", since)
    .where("body_storage", "=", 1)
    .execute();
}

/** Rewrites a call's manifests (their pieces were packed). */
export async function setManifests(
  db: Kysely<StoreSchema>,
  id: string,
  manifests: { readonly request_manifest: Buffer; readonly response_manifest: Buffer },
): Promise<void> {
  await db
    .updateTable("ai_gateway_recorded_calls")
    .set(manifests)
    .where("id", "=", id)
    .where("body_storage", "=", 1)
    .execute();
}

/** Deletes pieces (their chunks were moved first). */
export async function deletePackedPieces(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly number[],
): Promise<void> {
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    await db
      .deleteFrom("ai_gateway_body_pieces")
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT))
      .execute();
  }
}

/** A call's manifests as stored now (a reader whose pieces were packed reads them again). */
export async function readCallManifests(
  db: Kysely<StoreSchema>,
  id: string,
): Promise<{ request_manifest: Buffer | null; response_manifest: Buffer | null } | undefined> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["request_manifest", "response_manifest"])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** Whether any call keeps its bodies in the old columns (conversion not done). */
export async function anyOldBodyCall(db: Kysely<StoreSchema>): Promise<boolean> {
  const row = await db
    .selectFrom("ai_gateway_recorded_calls")
    .select("id")
    .where("body_storage", "=", 0)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
