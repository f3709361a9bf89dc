/**
 * Issue 33, item 2: calls recorded before their bodies were stored as pieces (whole in
 * `request_body` and `response_body_base64`) are converted by `verbatim db migrate`: in batches,
 * resumable, safe to interrupt with `kill -9` and to run from several processes at once. Here a
 * real `verbatim db migrate` is killed midway, every call's bytes are checked, then two run at
 * once to the end and every call's bytes are checked again. SQLite and PostgreSQL.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BodyReader } from "../../packages/server/src/gateway/recording/bodies/body-reader.js";
import { insertRecordedCall } from "../../packages/server/src/store/repositories/recorded-calls.js";
import { countOldBodyCalls } from "../../packages/server/src/store/repositories/recorded-bodies.js";
import {
  freshDatabase,
  testDialects,
  postgresUrl,
  type FreshDatabase,
} from "../support/databases.js";
import { describe } from "vitest";

const root = new URL("../../", import.meta.url).pathname;
const SUBJECTS = 4;
const CALLS = 200;

interface Original {
  readonly request: Buffer;
  readonly response: Buffer;
}

/** Writes old-form rows: sessions whose requests grow, non-ASCII text, binary answers. */
async function seedOldRows(fresh: FreshDatabase): Promise<Map<string, Original>> {
  const originals = new Map<string, Original>();
  const system = `système ✓ ${randomBytes(20_000).toString("base64")}`;
  for (let subject = 0; subject < SUBJECTS; subject++) {
    const messages: { role: string; content: string }[] = [];
    for (let index = 0; index < CALLS; index++) {
      messages.push({
        role: index % 2 ? "assistant" : "user",
        content: `${index} ${randomBytes(300).toString("hex")} é`,
      });
      const request = Buffer.from(JSON.stringify({ system, messages }), "utf8");
      const answer = randomBytes(500 + (index % 7) * 100);
      const response = index % 3 === 0 ? gzipSync(answer) : answer;
      const id = `call_${subject}_${String(index).padStart(5, "0")}`;
      originals.set(id, { request, response });
      await insertRecordedCall(fresh.database.db, {
        id,
        subject_uid: `subject_${subject}`,
        conversation_id: `conv_${subject}`,
        wire_format: "anthropic-messages",
        path: "/v1/messages",
        model: "claude-test",
        tip_prefix_sha256: `tip_${id}`,
        message_count: messages.length,
        matched_count: Math.max(0, messages.length - 1),
        previous_call_id: null,
        status_code: 200,
        request_headers: "{}",
        request_body: request.toString("utf8"),
        response_headers: JSON.stringify(index % 3 === 0 ? { "content-encoding": "gzip" } : {}),
        response_body_base64: response.toString("base64"),
        redacted: 0,
        input_tokens: null,
        output_tokens: null,
        cache_read_tokens: null,
        cache_write_tokens: null,
        duration_ms: 1,
        created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
      });
    }
  }
  return originals;
}

/** Every call's bodies equal what was recorded, in whichever form each is stored. */
async function expectEveryCallExact(fresh: FreshDatabase, originals: Map<string, Original>) {
  const rows = await fresh.database.db
    .selectFrom("ai_gateway_recorded_calls")
    .selectAll()
    .execute();
  expect(rows).toHaveLength(originals.size);
  const reader = new BodyReader(fresh.database.db);
  for (const row of rows) {
    const original = originals.get(row.id);
    expect((await reader.request(row)).equals(original?.request ?? Buffer.alloc(1)), row.id).toBe(
      true,
    );
    expect((await reader.response(row)).equals(original?.response ?? Buffer.alloc(1)), row.id).toBe(
      true,
    );
  }
}

function migrate(fresh: FreshDatabase) {
  const child = spawn(
    process.execPath,
    ["bin/verbatim.js", "db", "migrate", "--db", fresh.locationText],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, output: () => out };
}

for (const dialect of testDialects) {
  describe.skipIf(dialect === "postgres" && postgresUrl === undefined)(
    `issue 33: verbatim db migrate stores old bodies as pieces [${dialect}]`,
    () => {
      let fresh: FreshDatabase;
      let originals: Map<string, Original>;
      beforeAll(async () => {
        fresh = await freshDatabase(dialect);
        originals = await seedOldRows(fresh);
      }, 120_000);
      afterAll(async () => {
        await fresh?.cleanup();
      });

      it("killed with kill -9 midway, then run twice at once: every call's bytes hold throughout", async () => {
        expect(await countOldBodyCalls(fresh.database.db)).toBe(originals.size);
        const first = migrate(fresh);
        // Killed once some batches are committed and others are not.
        for (;;) {
          const left = await countOldBodyCalls(fresh.database.db);
          if (left < originals.size) break;
          if (first.child.exitCode !== null) throw new Error(`it ended first: ${first.output()}`);
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        first.child.kill("SIGKILL");
        await first.exited;
        const left = await countOldBodyCalls(fresh.database.db);
        expect(left).toBeGreaterThan(0);
        expect(left).toBeLessThan(originals.size);
        await expectEveryCallExact(fresh, originals);

        const [a, b] = [migrate(fresh), migrate(fresh)];
        expect([await a.exited, await b.exited]).toEqual([0, 0]);
        expect(await countOldBodyCalls(fresh.database.db)).toBe(0);
        // Between them they converted what the killed run left, each call once.
        const converted = [a.output(), b.output()]
          .map((text) => /stored the bodies of (\d+) call/.exec(text)?.[1] ?? "0")
          .reduce((sum, count) => sum + Number(count), 0);
        expect(converted).toBe(left);
        await expectEveryCallExact(fresh, originals);
        const rows = await fresh.database.db
          .selectFrom("ai_gateway_recorded_calls")
          .select(["request_body", "response_body_base64", "request_base_call_id"])
          .execute();
        expect(
          rows.every((row) => row.request_body === "" && row.response_body_base64 === ""),
        ).toBe(true);
        // A session's calls are diffs of one another, as if recorded now.
        expect(rows.filter((row) => row.request_base_call_id !== null).length).toBeGreaterThan(
          originals.size / 2,
        );
        // The pieces hold a fraction of what the rows held whole.
        const pieces = await fresh.database.db
          .selectFrom("ai_gateway_body_pieces")
          .select((select) => select.fn.sum<string | number>("size").as("size"))
          .executeTakeFirst();
        const whole = [...originals.values()].reduce((sum, body) => sum + body.request.length, 0);
        expect(Number(pieces?.size)).toBeLessThan(whole / 20);
      }, 240_000);
    },
  );
}
