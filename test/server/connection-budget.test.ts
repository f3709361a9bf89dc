/**
 * Issue 34 item 3: the connection budget of one server (`VERBATIM_PG_POOL_MAX`; docs/scale.md,
 * "Connection budget"): how it is split between the store's pool, the API key listener and the
 * console worker, the settings' errors, and a real `verbatim serve` under load that never holds
 * more PostgreSQL connections than its budget.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import {
  planConnections,
  postgresSettingsFromEnv,
} from "../../packages/server/src/server/connection-budget.js";
import { openDatabase, type StoreDatabase } from "../../packages/server/src/store/database.js";
import { postgresUrl, uniqueName, withAdminClient } from "../support/databases.js";
import { startServeChild, withoutProviderKeys, type ServeChild } from "../cli/serve-child.js";

describe("issue 34 item 3: the connection budget's split and settings", () => {
  it("splits the budget: listener, console worker, then the store's pool", () => {
    expect(planConnections(13, true, "B")).toEqual({
      budget: 13,
      pool: 10,
      listener: 1,
      consoleWorker: 2,
    });
    expect(planConnections(6, true, "B")).toEqual({
      budget: 6,
      pool: 4,
      listener: 1,
      consoleWorker: 1,
    });
    expect(planConnections(4, false, "B")).toEqual({
      budget: 4,
      pool: 4,
      listener: 0,
      consoleWorker: 0,
    });
    expect(() => planConnections(2, true, "VERBATIM_PG_POOL_MAX")).toThrow(
      "VERBATIM_PG_POOL_MAX must be at least 3, not 2",
    );
  });

  it("the pooler mode turns prepared statements and LISTEN off; bad values are refused clearly", () => {
    expect(postgresSettingsFromEnv({})).toEqual({
      pooler: undefined,
      preparedStatements: true,
      apiKeyCache: true,
      connections: { budget: 13, pool: 10, listener: 1, consoleWorker: 2 },
    });
    expect(
      postgresSettingsFromEnv({ VERBATIM_PG_POOLER: "transaction", VERBATIM_PG_POOL_MAX: "3" }),
    ).toEqual({
      pooler: "transaction",
      preparedStatements: false,
      apiKeyCache: false,
      connections: { budget: 3, pool: 3, listener: 0, consoleWorker: 0 },
    });
    // PgBouncer 1.21 and later can keep protocol-level prepared statements.
    expect(
      postgresSettingsFromEnv({
        VERBATIM_PG_POOLER: "transaction",
        VERBATIM_PG_PREPARED_STATEMENTS: "on",
      }).preparedStatements,
    ).toBe(true);
    expect(() => postgresSettingsFromEnv({ VERBATIM_PG_POOLER: "statement" })).toThrow(
      'VERBATIM_PG_POOLER must be one of session, transaction, not "statement"',
    );
    expect(() =>
      postgresSettingsFromEnv({ VERBATIM_PG_POOLER: "transaction", VERBATIM_API_KEY_CACHE: "on" }),
    ).toThrow("VERBATIM_API_KEY_CACHE=on needs LISTEN");
    expect(() => postgresSettingsFromEnv({ VERBATIM_PG_POOL_MAX: "ten" })).toThrow(
      'VERBATIM_PG_POOL_MAX must be a whole number, not "ten"',
    );
  });
});

describe.skipIf(postgresUrl === undefined)(
  "issue 34 item 3: a server under load stays within VERBATIM_PG_POOL_MAX",
  { timeout: 120_000 },
  () => {
    const name = uniqueName("verbatim_budget");
    let direct: StoreDatabase;
    let server: ServeChild | undefined;
    const admin = (text: string) => withAdminClient(postgresUrl!, (client) => client.query(text));
    beforeAll(async () => {
      await admin(`create database ${name}`);
      const url = new URL(postgresUrl!);
      url.pathname = `/${name}`;
      server = await startServeChild(["--db", url.toString()], {
        ...withoutProviderKeys(process.env),
        VERBATIM_WEB_BUILD: "off",
        VERBATIM_PG_POOL_MAX: "6",
        VERBATIM_OPERATOR_TOKEN: "vop_budget",
      });
      direct = await openDatabase({ dialect: "postgres", url: url.toString() }, { poolSize: 1 });
    });
    afterAll(async () => {
      await server?.stop();
      await direct?.close();
      await admin(`drop database if exists ${name} with (force)`);
    });

    it("issue 34 item 3: at most 6 connections with VERBATIM_PG_POOL_MAX=6, the listener among them", async () => {
      const { key } = await createApiKey(direct, "subject-budget");
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const created = await fetch(`${server!.url}/v1/conversations`, {
        method: "POST",
        headers,
        body: JSON.stringify({ items: [{ type: "message", role: "user", content: "hello" }] }),
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      let most = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows } = await sql<{ count: number }>`select count(*)::int as count
            from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`.execute(
            direct.db,
          );
          most = Math.max(most, rows[0]?.count ?? 0);
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      })();
      const load = await Promise.all([
        ...Array.from({ length: 40 }, () =>
          fetch(`${server!.url}/v1/conversations`, {
            method: "POST",
            headers,
            body: JSON.stringify({ items: [{ type: "message", role: "user", content: "hi" }] }),
          }).then((response) => response.status),
        ),
        ...Array.from({ length: 10 }, () =>
          fetch(`${server!.url}/ai-gateway/conversations/${id}/messages`, {
            headers: { authorization: "Bearer vop_budget" },
          }).then((response) => response.status),
        ),
      ]);
      sampling = false;
      await sampler;
      expect(load.filter((status) => status !== 200)).toEqual([]);
      process.stderr.write(`[issue 34 item 3] most connections seen: ${most}\n`);
      expect(most).toBeGreaterThan(2);
      expect(most).toBeLessThanOrEqual(6);
      const { rows } = await sql<{ count: number }>`select count(*)::int as count
        from pg_stat_activity where datname = current_database()
          and application_name like 'verbatim notifications%'`.execute(direct.db);
      expect(rows[0]?.count).toBe(1);
    });
  },
);
