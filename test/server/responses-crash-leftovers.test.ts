/**
 * Regression: "Crash leftovers" (issue 15). After `kill -9` of a server, its in-flight responses
 * stayed in_progress forever. Each in-flight response now holds a lease its server renews; once
 * the lease runs out the response is abandoned, and any server (a running one, or one starting)
 * ends it incomplete (`server_interrupted`). A real `verbatim serve` child process is killed
 * with SIGKILL, on SQLite and on PostgreSQL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/server/src/gateway/keys/api-keys.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import {
  startControlledUpstream,
  type ControlledUpstream,
} from "../support/controlled-upstream.js";
import {
  freshDatabase,
  postgresUrl,
  testDialects,
  uniqueName,
  type FreshDatabase,
} from "../support/databases.js";
import { until } from "../support/until.js";
import { testServer } from "../support/server.js";

const bin = new URL("../../bin/verbatim.js", import.meta.url).pathname;
const LEASE_MS = 3000;

/** `verbatim serve` in a child process; resolves with its URL once it listens. */
async function serveChild(
  db: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--db", db], {
    env: { ...process.env, VERBATIM_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out} ${err}`)), 90_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1] !== undefined && out.split("\n").length > 5) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", () => reject(new Error(`serve exited: ${out} ${err}`)));
  });
  return { child, url, exited };
}

for (const dialect of testDialects) {
  const skip = dialect === "postgres" && postgresUrl === undefined;
  describe.skipIf(skip)(`crash leftovers [${dialect}]`, { timeout: 180_000 }, () => {
    let fresh: FreshDatabase;
    let upstream: ControlledUpstream;
    beforeAll(async () => {
      fresh = await freshDatabase(dialect);
      upstream = await startControlledUpstream();
      // Answers that never end: the server is killed while they stream.
      upstream.answer = (writer) => {
        writer.start("claude-test");
        writer.text("half an ans");
      };
    });
    afterAll(async () => {
      await upstream.close();
      await fresh.cleanup();
    });

    const statuses = async (ids: readonly string[]) =>
      (
        await fresh.database.db
          .selectFrom("ai_gateway_messages")
          .select(["id", "status", "metadata"])
          .where("id", "in", [...ids])
          .execute()
      ).map((row) => ({
        status: row.status,
        stopReason: (JSON.parse(row.metadata) as { gateway: { stopReason?: string } }).gateway
          .stopReason,
      }));

    it("responses of a server killed with SIGKILL end incomplete (server_interrupted), ended by a running server", async () => {
      const subject = uniqueName("crash");
      const { key } = await createApiKey(fresh.database, subject);
      const killed = await serveChild(fresh.locationText, {
        ANTHROPIC_API_KEY: "sk-ant-test",
        ANTHROPIC_BASE_URL: upstream.url,
        VERBATIM_RESPONSE_LEASE_MS: String(LEASE_MS),
      });
      // A second server on the same database, running all along.
      const survivor = await testServer(fresh.database, {
        upstream: {
          ...upstreamConfigFromEnv({
            ANTHROPIC_API_KEY: "sk-ant-test",
            ANTHROPIC_BASE_URL: upstream.url,
          }),
          responseLeaseMs: LEASE_MS,
        },
      });
      try {
        const before = upstream.requests.length;
        const pending = [true, false, true].map((stream) =>
          fetch(`${killed.url}/v1/responses`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "claude-test", input: "go", stream }),
          })
            .then((reply) => reply.text())
            .catch(() => "connection lost"),
        );
        await until(() => upstream.requests.length >= before + 3, 10_000, 20);
        let ids: string[] = [];
        await until(
          async () => {
            const rows = await fresh.database.db
              .selectFrom("ai_gateway_messages")
              .select("id")
              .where("subject_uid", "=", subject)
              .where("status", "=", "in_progress")
              .execute();
            ids = rows.map((row) => row.id);
            return ids.length === 3;
          },
          10_000,
          20,
        );
        // Survives longer than a lease while its server lives: the lease is renewed.
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 1.5));
        expect((await statuses(ids)).map((row) => row.status)).toEqual(
          Array(3).fill("in_progress"),
        );

        killed.child.kill("SIGKILL");
        await killed.exited;
        await Promise.all(pending);
        const killedAt = Date.now();
        await until(
          async () => (await statuses(ids)).every((row) => row.status !== "in_progress"),
          10_000,
          20,
        );
        // Ended within a lease and a renewal interval of the kill, by the running server.
        expect(Date.now() - killedAt).toBeLessThan(LEASE_MS * 2 + 1000);
        expect(await statuses(ids)).toEqual(
          Array(3).fill({ status: "incomplete", stopReason: "server_interrupted" }),
        );
        const read = await survivor.app.inject({
          method: "GET",
          url: `/v1/responses/${ids[0]}`,
          headers: { authorization: `Bearer ${key}` },
        });
        expect(read.json().status).toBe("incomplete");
        expect(read.json().incomplete_details).toEqual({ reason: "server_interrupted" });
      } finally {
        killed.child.kill("SIGKILL");
        await survivor.app.close();
      }
    });

    it("a server starting ends the responses whose lease ran out before it started", async () => {
      const subject = uniqueName("restart");
      const store = new GatewayMessageStore(fresh.database);
      const [started] = await store.appendMessages(subject, {
        previousMessageId: null,
        messages: [
          {
            role: "assistant",
            content: [],
            status: "in_progress",
            gateway: { model: "claude-test" },
            leaseMilliseconds: 1,
          },
        ],
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const server = await testServer(fresh.database, {
        upstream: { ...upstreamConfigFromEnv({}), responseLeaseMs: 3_600_000 },
      });
      try {
        // Ended at start, long before the server's first round (an hour's third).
        expect(await statuses([started?.id ?? ""])).toEqual([
          { status: "incomplete", stopReason: "server_interrupted" },
        ]);
      } finally {
        await server.app.close();
      }
    });
  });
}
