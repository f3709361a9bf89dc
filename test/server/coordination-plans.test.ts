/**
 * Issue 34 item 3: what N servers on one PostgreSQL database run periodically, or before each
 * placing, reads through an index, never a walk of the big tables (docs/scale.md, "N servers on
 * one database"). The statements are the store's own (captured as the pg client sends them);
 * each is EXPLAINed on tables of 100,000 messages and 100,000 recorded calls (1,000 subjects,
 * analyzed, sequential scans allowed), and the plan must name the expected index and hold no
 * `Seq Scan` of either table. Skipped with a notice without VERBATIM_PG_URL.
 */
import pg from "pg";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ResponseLeases } from "../../packages/server/src/gateway/responses/leases.js";
import { listUnplacedCallIds } from "../../packages/server/src/store/repositories/recorded-calls.js";
import { listLeftoverCalls } from "../../packages/server/src/store/repositories/recorded-placing.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import type { DatabaseLocation } from "../../packages/server/src/store/location.js";
import { freshDatabase, postgresUrl, type FreshDatabase } from "../support/databases.js";

if (postgresUrl === undefined) {
  process.stderr.write(
    "\n[notice] VERBATIM_PG_URL is not set: the plans of the periodic statements (issue 34 item 3) are SKIPPED.\n\n",
  );
}

const ROWS = 100_000;
const BIG_TABLES = new Set(["ai_gateway_messages", "ai_gateway_recorded_calls"]);

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly Plans?: readonly PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

interface Sent {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * The statements `work` sends to PostgreSQL (BEGIN, COMMIT and locks left out), on a store
 * opened for it: the store's clients bind `query` when they are made.
 */
async function statementsOf(
  location: DatabaseLocation,
  work: (database: StoreDatabase) => Promise<unknown>,
): Promise<Sent[]> {
  const sent: Sent[] = [];
  const original = pg.Client.prototype.query;
  const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (
    this: pg.Client,
    ...args: unknown[]
  ) {
    const [first, second] = args;
    const raw =
      typeof first === "string" ? first : ((first as { text?: string } | null)?.text ?? "");
    const text = raw.replace(/^\s*\/\*.*?\*\/\s*/, "");
    const values =
      typeof first === "string"
        ? ((second as unknown[] | undefined) ?? [])
        : ((first as { values?: unknown[] } | null)?.values ?? []);
    if (/^\s*(select|update|delete|with)\b/i.test(text) && !/pg_advisory|^select 1$/i.test(text)) {
      sent.push({ text, values });
    }
    return (original as (...rest: unknown[]) => unknown).apply(this, args) as never;
  });
  const database = await openDatabase(location, { poolSize: 2 });
  try {
    await work(database);
  } finally {
    spy.mockRestore();
    await database.close();
  }
  return sent;
}

describe.skipIf(postgresUrl === undefined)(
  "issue 34 item 3: the periodic statements of the servers of one database use indexes",
  { timeout: 180_000 },
  () => {
    let fresh: FreshDatabase;
    beforeAll(async () => {
      fresh = await freshDatabase("postgres");
      await fresh.database.db.transaction().execute(async (db) => {
        // Rows only: no conversations or branches for them (foreign keys and triggers off).
        await sql`set local session_replication_role = replica`.execute(db);
        // 1 in 1,000 messages in_progress (held by one of 7 servers, half of the leases run out);
        // 1 in 500 calls unplaced.
        await sql`insert into ai_gateway_messages
        select 'msg_seed_' || i, 'subject_' || (i % 1000), 'conv_seed_' || (i / 20), null,
          'message', 'assistant',
          case when i % 1000 = 0 then 'in_progress' else 'completed' end,
          '[]', '{"caller":{},"gateway":{}}', 'branch_seed_' || (i / 20), i % 20, 0,
          to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          null,
          case when i % 1000 = 0 then (case when i % 2000 = 0 then '2000-01-01T00:00:00.000Z' else '2999-01-01T00:00:00.000Z' end) end,
          case when i % 1000 = 0 then 'server_seed_' || (i % 7) end
        from generate_series(1, ${ROWS}) as i`.execute(db);
        await sql`insert into ai_gateway_recorded_calls
        (id, subject_uid, conversation_id, wire_format, path, model, tip_prefix_sha256,
         message_count, matched_count, status_code, request_headers, request_body,
         response_headers, response_body_base64, redacted, duration_ms, created_at)
        select 'call_seed_' || lpad(i::text, 7, '0'), 'subject_' || (i % 1000),
          case when i % 500 = 0 then '' else 'conv_seed_' || (i / 20) end,
          'anthropic-messages', '/v1/messages', 'claude', md5(i::text), i % 20, 0, 200, '{}', '',
          '{}', '', 0, 1,
          to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        from generate_series(1, ${ROWS}) as i`.execute(db);
      });
      await sql`analyze ai_gateway_messages`.execute(fresh.database.db);
      await sql`analyze ai_gateway_recorded_calls`.execute(fresh.database.db);
    });
    afterAll(async () => {
      await fresh?.cleanup();
    });

    async function expectIndexed(
      work: (database: StoreDatabase) => Promise<unknown>,
      indexes: readonly string[],
    ) {
      const statements = await statementsOf(fresh.location, work);
      expect(statements.length).toBeGreaterThan(0);
      const used = new Set<string>();
      const distinct = new Map(statements.map((statement) => [statement.text, statement]));
      for (const statement of distinct.values()) {
        const explained = await explain(statement);
        for (const node of nodesOf(explained)) {
          // A partition's index is its table's index name with the partition's number
          // (store/partitions.ts), as is a partition's name.
          const index = node["Index Name"]?.replace(/_p\d+$/, "");
          if (index !== undefined) used.add(index);
          const relation = node["Relation Name"]?.replace(/_p\d+$/, "") ?? "";
          if (node["Node Type"] === "Seq Scan" && BIG_TABLES.has(relation)) {
            throw new Error(`a Seq Scan of ${node["Relation Name"]}: ${statement.text}`);
          }
        }
        process.stderr.write(
          `[issue 34 item 3 plan] ${statement.text.replace(/\s+/g, " ").slice(0, 140)} -> ${nodesOf(
            explained,
          )
            .map(
              (node) =>
                `${node["Node Type"]}${node["Index Name"] ? ` (${node["Index Name"]})` : ""}`,
            )
            .join(" / ")}\n`,
        );
      }
      for (const index of indexes) expect([...used]).toContain(index);
    }

    async function explain(statement: Sent): Promise<PlanNode> {
      const client = new pg.Client({
        connectionString: fresh.locationText,
      });
      await client.connect();
      try {
        const result = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
          `explain (format json) ${statement.text}`,
          [...statement.values],
        );
        const plan = result.rows[0]?.["QUERY PLAN"][0]?.Plan;
        if (plan === undefined) throw new Error("no plan");
        return plan;
      } finally {
        await client.end();
      }
    }

    it("issue 34 item 3: a server renews its leases by its id in one statement", async () => {
      await expectIndexed(
        async (database) => {
          const leases = new ResponseLeases(database, { holder: "server_seed_3" });
          leases.hold("subject_0", "msg_seed_3000", () => undefined);
          await leases.renew();
        },
        ["ai_gateway_messages_lease_holder"],
      );
    });

    it("issue 34 item 3: reconciling claims a bounded batch of expired leases by their end", async () => {
      await expectIndexed(
        (database) => new ResponseLeases(database).endAbandoned(),
        ["ai_gateway_messages_lease"],
      );
    });

    it("issue 34 item 3: the sweep for calls left unplaced reads the unplaced calls only", async () => {
      await expectIndexed(
        (database) => listLeftoverCalls(database.db, "2026-06-01T00:00:00.000Z", 100, ["call_x"]),
        ["ai_gateway_recorded_calls_unplaced"],
      );
    });

    it("issue 34 item 3: a placing reads its subject's unplaced calls only", async () => {
      await expectIndexed(
        (database) => listUnplacedCallIds(database.db, "subject_500"),
        ["ai_gateway_recorded_calls_unplaced"],
      );
    });
  },
);
