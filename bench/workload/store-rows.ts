/**
 * Rows shaped like the gateway's, written by SQL in bulk (benchmarks of the store at scale):
 * conversations of 20 messages of ~1 KB each across 1,000 subjects (`s<g % 1000>`), a branch
 * each, one job per 10 conversations with a turn of 10 items, and a recorded call per
 * conversation. Conversation `g` is `c<g>`, its branch `b<g>`, its messages `m<g>-<depth>`.
 */
import { sql, type Kysely } from "kysely";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";

/** Conversations a seeding call writes, in one transaction. */
export const SEED_CHUNK = 2_000;

/** Subjects the rows spread over. */
export const SEED_SUBJECTS = 1_000;

/** Messages of each conversation. */
export const SEED_DEPTH = 20;

/** Conversations [from, to) with their branches, messages, jobs and recorded calls, in SQL. */
export async function seedChunk(database: StoreDatabase, from: number, to: number): Promise<void> {
  const db = database.db as Kysely<unknown>;
  const sqlite = database.capabilities.dialect === "sqlite";
  const series = sqlite
    ? sql.raw(
        `(with recursive s(g) as (select ${from} union all select g + 1 from s where g + 1 < ${to}) select g from s)`,
      )
    : sql.raw(`(select g from generate_series(${from}, ${to - 1}) g)`);
  const depths = sqlite
    ? sql.raw(
        `(with recursive s(d) as (select 0 union all select d + 1 from s where d < 19) select d from s)`,
      )
    : sql.raw(`(select d from generate_series(0, 19) d)`);
  const items = sqlite
    ? sql.raw(
        `(with recursive s(p) as (select 0 union all select p + 1 from s where p < 9) select p from s)`,
      )
    : sql.raw(`(select p from generate_series(0, 9) p)`);
  // Text of words (a trigram index of random bytes would outweigh the rows).
  const phrase = "'the agent read the file and wrote a test for it, then ran it again. '";
  const noise = sqlite
    ? sql.raw(`g || ' ' || d || ' ' || replace(hex(zeroblob(12)), '00', ${phrase})`)
    : sql.raw(`g || ' ' || d || ' ' || repeat(${phrase}, 12)`);
  const concat = (...parts: string[]) => sql.raw(parts.join(" || "));
  const subject = concat("'s'", "(g % 1000)");
  const at = "'2025-01-01T00:00:00.000Z'";
  await db.transaction().execute(async (trx) => {
    await sql`insert into ai_gateway_conversations (id, subject_uid, created_at, metadata)
      select 'c' || g, ${subject}, ${sql.raw(at)}, '{}' from ${series} as series`.execute(trx);
    await sql`insert into ai_gateway_branches (id, subject_uid, conversation_id, parent_branch_id, fork_depth, tip_depth, created_at)
      select 'b' || g, ${subject}, 'c' || g, null, -1, 19, ${sql.raw(at)} from ${series} as series`.execute(
      trx,
    );
    await sql`insert into ai_gateway_messages (id, subject_uid, conversation_id, previous_message_id,
        type, role, status, content, metadata, branch_id, depth, context_start_depth, created_at, updated_at)
      select 'm' || g || '-' || d, ${subject}, 'c' || g,
        case when d = 0 then null else 'm' || g || '-' || (d - 1) end,
        case when d % 2 = 0 then 'user' else 'assistant' end, case when d % 2 = 0 then 'user' else 'assistant' end, 'completed',
        ${sqlite ? sql`'[{"type":"text","text":"' || ${noise} || '"}]'` : sql`cast('[{"type":"text","text":"' || ${noise} || '"}]' as json)`}, '{"caller":{},"gateway":{}}', 'b' || g, d, 0, ${sql.raw(at)}, ${sql.raw(at)}
      from ${series} as series, ${depths} as depths`.execute(trx);
    await sql`insert into ai_gateway_recorded_calls (id, subject_uid, conversation_id, wire_format, path, model,
        tip_prefix_sha256, message_count, matched_count, status_code, request_headers, request_body,
        response_headers, response_body_base64, redacted, duration_ms, created_at, body_storage)
      select 'call' || g, ${subject}, 'c' || g, 'anthropic-messages', '/v1/messages', 'claude',
        'tip' || g, 20, 19, 200, '{}', '', '{}', '', 0, 100, ${sql.raw(at)}, 1
      from ${series} as series`.execute(trx);
    await sql`insert into background_agent_jobs (id, subject_uid, conversation_id, status, retry_budget,
        attempts, metadata, created_at, updated_at)
      select 'job' || g, ${subject}, 'c' || g, 'succeeded', 0, 1, '{}', ${sql.raw(at)}, ${sql.raw(at)}
      from ${series} as series where g % 10 = 0`.execute(trx);
    await sql`insert into background_agent_job_turns (id, subject_uid, job_id, turn_index, attempt, revision,
        status, item_count, created_at, updated_at)
      select 'turn' || g, ${subject}, 'job' || g, 0, 1, 1, 'completed', 10, ${sql.raw(at)}, ${sql.raw(at)}
      from ${series} as series where g % 10 = 0`.execute(trx);
    await sql`insert into background_agent_job_turn_items (turn_id, position, revision, item_key, item,
        subject_uid, job_id, created_at)
      select 'turn' || g, p, 1, 'k' || p, '{"type":"agent_message","text":"step"}', ${subject}, 'job' || g, ${sql.raw(at)}
      from ${series} as series, ${items} as items where g % 10 = 0`.execute(trx);
  });
}
