import { sql, type Kysely, type OnConflictBuilder, type Selectable } from "kysely";
import type { BodyChunkTable, BodyPackTable, BodyPieceTable } from "../recorded-call-schema.js";
import type { DialectCapabilities } from "../capabilities.js";
import type { StoreSchema } from "../schema.js";
import { queryTemplate } from "../query-template.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";

/**
 * Rows of recorded bodies (migration 0015): pieces, the chunk index, and the manifests of
 * calls. These only read and write rows; gateway/recording/bodies/ decides.
 */

/** Ids per statement: well under both databases' limits on bound parameters. */
const IDS_PER_STATEMENT = 1000;

export type PieceRow = Selectable<BodyPieceTable>;
export type ChunkRow = Selectable<BodyChunkTable>;
export type PackRow = Selectable<BodyPackTable>;
/** A pack as its lookups need it: all but its bytes. */
export type PackFacts = Omit<PackRow, "bytes">;

/**
 * `count` new piece ids. SQLite: after the largest (packed ones included), inside the caller's
 * write transaction (one writer at a time). PostgreSQL: from the sequence, in any transaction.
 */
export async function newPieceIds(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  count: number,
): Promise<number[]> {
  if (count === 0) return [];
  if (capabilities.dialect === "sqlite") {
    const { rows } = await lastPieceIdQuery.run(db);
    const last = Number(rows[0]?.id ?? 0);
    return Array.from({ length: count }, (_, index) => last + 1 + index);
  }
  const { rows } = await nextPieceIdsQuery.run(db, count);
  return rows.map((row) => Number(row.id));
}

// A packed piece keeps its id in its pack (whose id is the largest it holds). SQLite's piece
// ids are rowids, unique over every subject's pieces: the largest is the whole table's.
const lastPieceIdQuery = queryTemplate<[], { id: number | null }>(
  () => sql<{ id: number | null }>`
    select max(coalesce((select max(id) from ai_gateway_body_pieces), 0),
               coalesce((select max(id) from ai_gateway_body_packs), 0)) as id
    ${sql.raw(ACROSS_SUBJECTS)}`,
);

const nextPieceIdsQuery = queryTemplate<[number], { id: string }>(
  (_db, slot) =>
    sql<{
      id: string;
    }>`select nextval('ai_gateway_body_piece_ids') as id from generate_series(1, ${slot(0)}::integer)`,
);

const insertPieceQuery = queryTemplate<[number, string, number, number, Buffer, string], never>(
  (db, slot) =>
    db.insertInto("ai_gateway_body_pieces").values({
      id: slot(0),
      subject_uid: slot(1),
      codec: slot(2),
      size: slot(3),
      bytes: slot(4),
      created_at: slot(5),
    }),
);

export async function insertPieces(
  db: Kysely<StoreSchema>,
  rows: readonly PieceRow[],
): Promise<void> {
  // One piece per statement: a long body's pieces are each a large value.
  for (const row of rows) {
    await insertPieceQuery.run(
      db,
      row.id,
      row.subject_uid,
      row.codec,
      row.size,
      row.bytes,
      row.created_at,
    );
  }
}

/** Chunk rows written one statement each up to this many (a call's usual few), else in bulk. */
const CHUNKS_ONE_BY_ONE = 4;

/** A chunk the subject stored already keeps its first piece. */
const keepStoredChunk = (conflict: OnConflictBuilder<StoreSchema, "ai_gateway_body_chunks">) =>
  conflict.columns(["subject_uid", "hash"]).doNothing();

const insertChunkQuery = queryTemplate<[string, Buffer, number, number], never>((db, slot) =>
  db
    .insertInto("ai_gateway_body_chunks")
    .values({ subject_uid: slot(0), hash: slot(1), piece_id: slot(2), piece_offset: slot(3) })
    .onConflict(keepStoredChunk),
);

export async function insertChunks(
  db: Kysely<StoreSchema>,
  rows: readonly ChunkRow[],
): Promise<void> {
  if (rows.length <= CHUNKS_ONE_BY_ONE) {
    for (const row of rows) {
      await insertChunkQuery.run(db, row.subject_uid, row.hash, row.piece_id, row.piece_offset);
    }
    return;
  }
  const perStatement = Math.floor(IDS_PER_STATEMENT / 4);
  for (let start = 0; start < rows.length; start += perStatement) {
    await db
      .insertInto("ai_gateway_body_chunks")
      .values(rows.slice(start, start + perStatement))
      .onConflict(keepStoredChunk)
      .execute();
  }
}

/** Lookups of this many hashes or fewer run as templates, one per count. */
const FIND_CHUNKS_TEMPLATES = 8;

const findChunksQueries = Array.from({ length: FIND_CHUNKS_TEMPLATES }, (_, index) =>
  queryTemplate<[string, ...Buffer[]], ChunkRow>((db, slot) =>
    db
      .selectFrom("ai_gateway_body_chunks")
      .selectAll()
      .where("subject_uid", "=", slot(0))
      .where(
        "hash",
        "in",
        Array.from({ length: index + 1 }, (_, hash) => slot(hash + 1)),
      ),
  ),
);

/** The subject's chunks among `hashes`. */
export async function findChunks(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  hashes: readonly Buffer[],
): Promise<ChunkRow[]> {
  const out: ChunkRow[] = [];
  for (let start = 0; start < hashes.length; start += IDS_PER_STATEMENT) {
    const slice = hashes.slice(start, start + IDS_PER_STATEMENT);
    const template = findChunksQueries[slice.length - 1];
    const rows =
      template !== undefined
        ? (await template.run(db, subjectUid, ...slice)).rows
        : await db
            .selectFrom("ai_gateway_body_chunks")
            .selectAll()
            .where("subject_uid", "=", subjectUid)
            .where("hash", "in", slice)
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

/** Which of the subject's pieces among `ids` are rows of their own, locked against deletion (PostgreSQL). */
export async function piecesPresent(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  ids: readonly number[],
): Promise<number[]> {
  const found: number[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    let query = db
      .selectFrom("ai_gateway_body_pieces")
      .select("id")
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT));
    if (capabilities.dialect === "postgres") query = query.forKeyShare();
    for (const row of await query.execute()) found.push(Number(row.id));
  }
  return found;
}

/** A call's id by its key; on PostgreSQL its row locked against deletion. */
function lockCallQuery(forKeyShare: boolean) {
  return queryTemplate<[string, string], { id: string }>((db, slot) => {
    const query = db
      .selectFrom("ai_gateway_recorded_calls")
      .select("id")
      .where("subject_uid", "=", slot(0))
      .where("id", "=", slot(1));
    return forKeyShare ? query.forKeyShare() : query;
  });
}

const lockCallQueries = { sqlite: lockCallQuery(false), postgres: lockCallQuery(true) };

/** Whether a call of the subject exists, locked against deletion until the transaction ends (PostgreSQL). */
export async function lockCall(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  id: string,
): Promise<boolean> {
  const { rows } = await lockCallQueries[capabilities.dialect].run(db, subjectUid, id);
  return rows.length > 0;
}

export interface ManifestLink {
  readonly id: string;
  readonly request_base_call_id: string | null;
  readonly request_manifest: Buffer | null;
}

/**
 * A call of the subject's request manifest and those of the calls it diffs against (the same
 * subject's), the call's own first, following `request_base_call_id` at most `limit` steps.
 */
export async function readManifestChain(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
  limit: number,
): Promise<ManifestLink[]> {
  const { rows } = await sql<ManifestLink & { step: number }>`
    with recursive chain(id, request_base_call_id, request_manifest, step) as (
      select id, request_base_call_id, request_manifest, 0
      from ai_gateway_recorded_calls where subject_uid = ${subjectUid} and id = ${id}
      union all
      select c.id, c.request_base_call_id, c.request_manifest, chain.step + 1
      from ai_gateway_recorded_calls c
      join chain on c.subject_uid = ${subjectUid} and c.id = chain.request_base_call_id
      where chain.step < ${limit}
    )
    select id, request_base_call_id, request_manifest, step from chain order by step`.execute(db);
  return rows.map(({ id: callId, request_base_call_id, request_manifest }) => ({
    id: callId,
    request_base_call_id,
    request_manifest,
  }));
}

/** A call to convert: its id and its owner, whom every later statement on it names. */
export interface OldBodyCall {
  readonly id: string;
  readonly subject_uid: string;
}

/**
 * Up to `limit` calls whose bodies are still in the old columns (`body_storage` 0), oldest
 * first; on PostgreSQL locked for the transaction, skipping those another process holds.
 */
export async function claimOldBodyCalls(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  limit: number,
): Promise<OldBodyCall[]> {
  let query = db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["id", "subject_uid"])
    // A literal: the partial index of calls still to convert is used only when the statement
    // itself says body_storage = 0 (SQLite never sees through a parameter).
    .where("body_storage", "=", sql.lit(0))
    .orderBy("id")
    .limit(limit);
  if (capabilities.dialect === "postgres") query = query.forUpdate().skipLocked();
  // The migration of old rows finds them in every subject (the lock clause stays last).
  return (await query.modifyEnd(sql.raw(ACROSS_SUBJECTS)).execute()).map((row) => ({
    id: row.id,
    subject_uid: row.subject_uid,
  }));
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

/** Writes a call of the subject's bodies as pieces, if they are still in the old form; false when not. */
export async function setPieceBodies(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
  columns: PieceBodyColumns,
): Promise<boolean> {
  const result = await db
    .updateTable("ai_gateway_recorded_calls")
    .set({ ...columns, request_body: "", response_body_base64: "" })
    .where("subject_uid", "=", subjectUid)
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
    .where("body_storage", "=", sql.lit(0))
    // What is left of the migration of old rows, in every subject.
    .modifyEnd(sql.raw(ACROSS_SUBJECTS))
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
  filter: {
    readonly smallerThan: number;
    readonly before: string;
    readonly fromId: number;
    /** Only ids below this one. */
    readonly belowId?: number;
  },
  limit: number,
): Promise<PieceFacts[]> {
  let query = db
    .selectFrom("ai_gateway_body_pieces")
    .select(["id", "size", "created_at"])
    .where("subject_uid", "=", subjectUid)
    .where("id", ">=", filter.fromId);
  if (filter.belowId !== undefined) query = query.where("id", "<", filter.belowId);
  const rows = await query
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

/** Deletes pieces (packed: their bytes are in a pack now). */
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

/** A call of the subject's manifests as stored now (a reader whose pieces were packed reads them again). */
export async function readCallManifests(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  id: string,
): Promise<{ request_manifest: Buffer | null; response_manifest: Buffer | null } | undefined> {
  return db
    .selectFrom("ai_gateway_recorded_calls")
    .select(["request_manifest", "response_manifest"])
    .where("subject_uid", "=", subjectUid)
    .where("id", "=", id)
    .executeTakeFirst();
}

/**
 * The subject's packs from id `fromId` on, in id order, at most `limit`, without their bytes:
 * the first of them is the only one that may hold a piece of id `fromId` (packing.ts).
 */
export async function packsFrom(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  fromId: number,
  limit: number,
): Promise<PackFacts[]> {
  const rows = await db
    .selectFrom("ai_gateway_body_packs")
    .select(["id", "subject_uid", "codec", "size", "created_at", "pieces"])
    .where("subject_uid", "=", subjectUid)
    .where("id", ">=", fromId)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/**
 * Which of the subject's packs among `ids` exist, locked until the transaction ends
 * (PostgreSQL): `key share` against their deletion, `update` against every other locker.
 */
export async function lockPacks(
  db: Kysely<StoreSchema>,
  capabilities: DialectCapabilities,
  subjectUid: string,
  ids: readonly number[],
  mode: "key share" | "update",
): Promise<number[]> {
  const found: number[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    let query = db
      .selectFrom("ai_gateway_body_packs")
      .select("id")
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT));
    if (capabilities.dialect === "postgres") {
      query = mode === "update" ? query.forUpdate() : query.forKeyShare();
    }
    for (const row of await query.execute()) found.push(Number(row.id));
  }
  return found;
}

/** The subject's pack of the largest id (where packing goes on), without its bytes. */
export async function lastPack(
  db: Kysely<StoreSchema>,
  subjectUid: string,
): Promise<PackFacts | undefined> {
  const row = await db
    .selectFrom("ai_gateway_body_packs")
    .select(["id", "subject_uid", "codec", "size", "created_at", "pieces"])
    .where("subject_uid", "=", subjectUid)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : { ...row, id: Number(row.id) };
}

/** The subject's packs among `ids`, with their bytes (fewer when some are gone). */
export async function readPacks(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly number[],
): Promise<PackRow[]> {
  const out: PackRow[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom("ai_gateway_body_packs")
      .selectAll()
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT))
      .execute();
    for (const row of rows) out.push({ ...row, id: Number(row.id) });
  }
  return out;
}

export async function insertPack(db: Kysely<StoreSchema>, row: PackRow): Promise<void> {
  await db.insertInto("ai_gateway_body_packs").values(row).execute();
}

/** Deletes packs (rejoined into a larger one, or freed). */
export async function deletePacks(
  db: Kysely<StoreSchema>,
  subjectUid: string,
  ids: readonly number[],
): Promise<void> {
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) {
    await db
      .deleteFrom("ai_gateway_body_packs")
      .where("subject_uid", "=", subjectUid)
      .where("id", "in", ids.slice(start, start + IDS_PER_STATEMENT))
      .execute();
  }
}

/**
 * PostgreSQL: vacuums the pieces and packs tables (packing.ts says when). Not in a transaction
 * (VACUUM cannot be); a table another vacuum holds is skipped.
 */
export async function vacuumPiecesAndPacks(db: Kysely<StoreSchema>): Promise<void> {
  await sql`vacuum (skip_locked) ai_gateway_body_pieces, ai_gateway_body_packs`.execute(db);
}

/**
 * PostgreSQL: the dead rows the last vacuum of the pieces and packs tables (their partitions)
 * could not remove (a transaction open meanwhile could still see them), as it reported them.
 */
export async function deadRowsLeft(db: Kysely<StoreSchema>): Promise<number> {
  const { rows } = await sql<{ dead: string | null }>`
    select sum(pg_stat_get_dead_tuples(t.relid)) as dead
    from (select 'ai_gateway_body_pieces'::regclass as relid
      union select 'ai_gateway_body_packs'::regclass
      -- Their partitions (none for a plain table).
      union select relid from pg_partition_tree('ai_gateway_body_pieces')
      union select relid from pg_partition_tree('ai_gateway_body_packs')) t`.execute(db);
  return Number(rows[0]?.dead ?? 0);
}
