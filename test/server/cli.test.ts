import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../packages/library/src/cli/main.js";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { startAnthropicUpstream, type AnthropicUpstream } from "../support/anthropic-upstream.js";
import { freshDatabase, postgresUrl, type FreshDatabase } from "../support/databases.js";

const bin = new URL("../../bin/verbatim.js", import.meta.url).pathname;

interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
}

/** Runs `verbatim serve` in a child process and waits for the URL it prints. */
async function serve(args: string[], env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...args], {
    env: { ...process.env, VERBATIM_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out} ${err}`)), 60_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      // The banner ends with the operator token on its own line.
      if (match?.[1] !== undefined && out.split("\n").length > 5) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", () => reject(new Error(`serve exited: ${out} ${err}`)));
  });
  return { child, url, stdout: () => out, exited };
}

async function run(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, stdout, stderr };
}

// Child processes start through tsx: allow for a loaded machine.
describe("verbatim keys and verbatim serve", { timeout: 180_000 }, () => {
  let folder: string;
  let upstream: AnthropicUpstream;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "verbatim-serve-"));
    upstream = await startAnthropicUpstream();
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("keys create prints the key alone on the last line (--json has fixed keys); revoke; usage errors exit 2", async () => {
    const db = join(folder, "keys.sqlite");
    const io = bufferIO();
    expect(await main(["keys", "create", "--db", db, "--subject", "user-1"], io)).toBe(0);
    const lines = io.out().toString().trimEnd().split("\n");
    expect(lines[lines.length - 1]).toMatch(/^vbk_[A-Za-z0-9_-]{43}$/);
    const json = bufferIO();
    expect(await main(["keys", "create", "--db", db, "--subject", "user-1", "--json"], json)).toBe(
      0,
    );
    const created = JSON.parse(json.out().toString()) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(["created_at", "key", "subject_uid"]);
    const revoke = bufferIO();
    expect(await main(["keys", "revoke", created["key"] ?? "", "--db", db, "--json"], revoke)).toBe(
      0,
    );
    expect(Object.keys(JSON.parse(revoke.out().toString())).sort()).toEqual([
      "already_revoked",
      "revoked_at",
      "subject_uid",
    ]);
    const unknown = bufferIO();
    expect(await main(["keys", "revoke", "vbk_unknown", "--db", db], unknown)).toBe(1);
    expect(unknown.err()).toContain("not stored");
    expect(await main(["keys", "create", "--db", db], bufferIO())).toBe(2);
    expect(await main(["serve", "--port", "99999"], bufferIO())).toBe(2);
    // A number setting with a typo stops the server before it listens, naming the variable.
    for (const name of [
      "VERBATIM_RATE_LIMIT_PER_MINUTE",
      "VERBATIM_MESSAGE_CACHE_MB",
      "VERBATIM_UPSTREAM_TIMEOUT_MS",
    ]) {
      const typo = bufferIO({ env: { ...process.env, [name]: "12O" } });
      const untouched = join(folder, "typo", "never.sqlite");
      expect(await main(["serve", "--db", untouched, "--port", "0"], typo)).toBe(1);
      expect(typo.err()).toContain(`${name} must be a whole number, not "12O"`);
      expect(existsSync(untouched)).toBe(false);
    }
    for (const name of ["VERBATIM_API_KEY_CACHE", "VERBATIM_PG_PREPARED_STATEMENTS"]) {
      const notASwitch = bufferIO({ env: { ...process.env, [name]: "sometimes" } });
      const untouched = join(folder, "typo", "never.sqlite");
      expect(await main(["serve", "--db", untouched, "--port", "0"], notASwitch)).toBe(1);
      expect(notASwitch.err()).toContain(`${name} must be on or off, not "sometimes"`);
      expect(existsSync(untouched)).toBe(false);
    }
  });

  it("serve: healthz, a key made by another process works at once and revocation too, and SIGTERM finishes in-flight requests", async () => {
    const db = join(folder, "serve.sqlite");
    const server = await serve(["--db", db], {
      VERBATIM_OPERATOR_TOKEN: "vop_fixed",
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: upstream.url,
    });
    expect(server.stdout()).toContain("vop_fixed");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const console = await fetch(`${server.url}/ai-gateway/conversations`, {
      headers: { authorization: "Bearer vop_fixed" },
    });
    expect(console.status).toBe(200);

    // This test process is not the server's: keys it writes count at once.
    const io = bufferIO();
    expect(await main(["keys", "create", "--db", db, "--subject", "user-2"], io)).toBe(0);
    const key = io.out().toString().trimEnd().split("\n").pop() ?? "";
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    expect((await fetch(`${server.url}/v1/responses/msg_x`, { headers })).status).toBe(404);
    const other = bufferIO();
    expect(await main(["keys", "create", "--db", db, "--subject", "user-3"], other)).toBe(0);
    const revoked = other.out().toString().trimEnd().split("\n").pop() ?? "";
    expect(await main(["keys", "revoke", revoked, "--db", db], bufferIO())).toBe(0);
    const refused = await fetch(`${server.url}/v1/responses/msg_x`, {
      headers: { authorization: `Bearer ${revoked}` },
    });
    expect(refused.status).toBe(401);

    // A slow upstream: the request is in flight when SIGTERM arrives, and still completes.
    upstream.delayMs = 1500;
    const inFlight = fetch(`${server.url}/v1/responses`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "claude-test", input: "finish me" }),
    });
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    server.child.kill("SIGTERM");
    const reply = await inFlight;
    upstream.delayMs = 0;
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as { output: { content: { text: string }[] }[] };
    expect(body.output[0]?.content[0]?.text).toBe("You said: finish me");
    expect(await server.exited).toBe(0);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it.skipIf(postgresUrl === undefined)(
    "several servers share one PostgreSQL database: a response made on one is read and continued on the other",
    async () => {
      let fresh: FreshDatabase | undefined;
      const servers: ServeProcess[] = [];
      try {
        fresh = await freshDatabase("postgres", { migrate: false });
        const env = {
          VERBATIM_OPERATOR_TOKEN: "vop_pg",
          ANTHROPIC_API_KEY: "sk-ant-test",
          ANTHROPIC_BASE_URL: upstream.url,
        };
        // Both start (and migrate) at once; the advisory lock serialises the migrations. The
        // second runs without named prepared statements (as behind a pooler that cannot keep
        // them): the two work on the same rows alike.
        servers.push(
          ...(await Promise.all([
            serve(["--db", fresh.locationText], env),
            serve(["--db", fresh.locationText], { ...env, VERBATIM_PG_PREPARED_STATEMENTS: "off" }),
          ])),
        );
        const created = await run([
          "keys",
          "create",
          "--db",
          fresh.locationText,
          "--subject",
          "pg-user",
        ]);
        expect(created.code).toBe(0);
        const key = created.stdout.trimEnd().split("\n").pop() ?? "";
        const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
        const [a, b] = servers;
        const first = (await (
          await fetch(`${a?.url}/v1/responses`, {
            method: "POST",
            headers,
            body: JSON.stringify({ model: "claude-test", input: "on A" }),
          })
        ).json()) as { id: string };
        const read = await fetch(`${b?.url}/v1/responses/${first.id}`, { headers });
        expect(read.status).toBe(200);
        const second = await fetch(`${b?.url}/v1/responses`, {
          method: "POST",
          headers,
          body: JSON.stringify({
            model: "claude-test",
            input: "on B",
            previous_response_id: first.id,
          }),
        });
        expect(
          ((await second.json()) as { previous_response_id: string }).previous_response_id,
        ).toBe(first.id);
        // Both servers keep the key now; `keys revoke` from a third process reaches both
        // through the change notification, milliseconds after it commits.
        expect((await run(["keys", "revoke", key, "--db", fresh.locationText])).code).toBe(0);
        for (const server of [a, b]) {
          const deadline = performance.now() + 2_000;
          let status = 0;
          do {
            status = (await fetch(`${server?.url}/v1/responses/${first.id}`, { headers })).status;
          } while (status !== 401 && performance.now() < deadline);
          expect(status).toBe(401);
        }
      } finally {
        for (const server of servers) {
          server.child.kill("SIGTERM");
          await server.exited;
        }
        await fresh?.cleanup();
      }
    },
  );
});
