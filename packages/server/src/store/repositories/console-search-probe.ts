import { sql, type RawBuilder } from "kysely";
import type { DialectCapabilities } from "../capabilities.js";
import { ACROSS_SUBJECTS } from "../subject-keys.js";

/**
 * The first try of a console search (docs/scale.md, "Lists and search"): the newest rows in
 * list order, read through the `created_at` indexes of migration 0017, a fixed number of each
 * table, each tested with the search's own match. A word most messages hold fills its page
 * within them, and the page is then the search's answer, found without reading every match;
 * otherwise (the page is not full, or a row beyond them could come before its last match) the
 * caller searches through the text index.
 */
export const PROBE_ROWS = 8000;

/** A match's sort key columns, the page's bodies aside. */
export interface SearchKeyRow {
  readonly kind: "message" | "item";
  readonly id: string;
  readonly parent_id: string;
  readonly turn_id: string | null;
  readonly subject_uid: string;
  readonly created_at: string;
}

export interface ProbeRequest {
  /** The match of one row's JSON text (`alias.column`), in the search's own semantics. */
  readonly matches: (alias: string, column: string) => RawBuilder<unknown>;
  readonly limit: number;
  /** How many of the newest rows of each table it reads. */
  readonly rows: number;
  /** The previous page's last match: created_at, parent_id, id, kind. */
  readonly after?: readonly [string, string, string, string] | undefined;
  /** Only this subject's rows: its newest rows are read, and the statement names it. */
  readonly subjectUid?: string | undefined;
}

/**
 * The page, when the newest rows of both tables decide it; undefined when the index must. One
 * statement: the scans, the page and the check see the same rows. With a subject, the scans
 * read that subject's newest rows only (the rows they leave unread are still the ones after
 * their last, so the check below stands) and name it; without one, across subjects by nature:
 * the newest rows are everyone's. No index holds one subject's rows in this order yet, so a
 * subject's scans read all of its rows (on PostgreSQL, in its one partition) and sort them.
 */
export function probeStatement(
  capabilities: DialectCapabilities,
  request: ProbeRequest,
): RawBuilder<SearchKeyRow & { readonly decided: number }> {
  const { matches, limit, after, rows, subjectUid } = request;
  const from = (alias: "m" | "i", key: RawBuilder<unknown>) => {
    const conditions = [
      ...(subjectUid === undefined ? [] : [sql`${sql.raw(alias)}.subject_uid = ${subjectUid}`]),
      ...(after === undefined ? [] : [sql`${key} <= (${after[0]}, ${after[1]}, ${after[2]})`]),
    ];
    return conditions.length === 0 ? sql`` : sql`where ${sql.join(conditions, sql` and `)}`;
  };
  const nullText = capabilities.dialect === "postgres" ? sql`null::text` : sql`null`;
  const messages = sql`select m.created_at, m.conversation_id as parent_id, m.id,
      'message' as kind, ${nullText} as turn_id, m.subject_uid, ${matches("m", "content")} as hit
    from ai_gateway_messages m ${from("m", sql`(m.created_at, m.conversation_id, m.id)`)}
    order by m.created_at desc, m.conversation_id desc, m.id desc limit ${rows}`;
  const items = sql`select i.created_at, i.job_id as parent_id, i.item_key as id,
      'item' as kind, i.turn_id, i.subject_uid, ${matches("i", "item")} as hit
    from background_agent_job_turn_items i ${from("i", sql`(i.created_at, i.job_id, i.item_key)`)}
    order by i.created_at desc, i.job_id desc, i.item_key desc limit ${rows}`;
  const beyond =
    after === undefined
      ? sql``
      : sql`and (created_at, parent_id, id, kind) < (${after[0]}, ${after[1]}, ${after[2]}, ${after[3]})`;
  // A scan that read PROBE_ROWS rows stops at its oldest row: the rows it did not read come
  // after that one, so the page stands if its last match comes before both scans' last rows.
  const covered = (scan: string) => sql`(
      (select count(*) from ${sql.table(scan)}) < ${rows}
      or exists (select 1 from page_last p, (select created_at, parent_id, id from ${sql.table(scan)}
          order by created_at, parent_id, id limit 1) s
        where (s.created_at, s.parent_id, s.id) <= (p.created_at, p.parent_id, p.id)))`;
  return sql<SearchKeyRow & { readonly decided: number }>`with
    message_scan as (${messages}),
    item_scan as (${items}),
    page as (select created_at, parent_id, id, kind, turn_id, subject_uid from (
        select * from message_scan where hit union all select * from item_scan where hit) hits
      where 1 = 1 ${beyond}
      order by created_at desc, parent_id desc, id desc, kind desc limit ${limit}),
    page_last as (select * from page order by created_at, parent_id, id, kind limit 1),
    verdict as (select case when ((select count(*) from page) = ${limit}
        or ((select count(*) from message_scan) < ${rows}
          and (select count(*) from item_scan) < ${rows}))
        and ${covered("message_scan")} and ${covered("item_scan")} then 1 else 0 end as decided)
    select verdict.decided, page.* from verdict left join page on 1 = 1
    order by page.created_at desc, page.parent_id desc, page.id desc, page.kind desc
    ${subjectUid === undefined ? sql.raw(ACROSS_SUBJECTS) : sql``}`;
}
