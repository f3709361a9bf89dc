import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { importClaudeCodeFile } from "../../packages/library/src/interop/claude-code/import.js";
import { fixturesRoot } from "./fixture-files.js";

// Findings of the security probe of issue 31 (item 5): each through the real `verbatim` command
// where it is about the command.

const folder = mkdtempSync(join(tmpdir(), "verbatim-hardening-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function run(argv: string[]) {
  const io = bufferIO({ cwd: folder });
  const code = await main(argv, io);
  return { code, out: io.out().toString("utf8"), err: io.err() };
}

/** A fresh folder under the test's folder. */
function fresh(name: string): string {
  const path = join(folder, name);
  mkdirSync(path, { recursive: true });
  return path;
}

function jsonl(lines: readonly (string | object)[]): string {
  return lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n");
}

function userLine(sessionId: string, uuid: string, extra: object = {}) {
  return {
    type: "user",
    sessionId,
    uuid,
    parentUuid: null,
    message: { role: "user", content: "hello" },
    ...extra,
  };
}

function assistantLine(sessionId: string, uuid: string, parentUuid: string, extra: object = {}) {
  return {
    type: "assistant",
    sessionId,
    uuid,
    parentUuid,
    message: { role: "assistant", model: "claude-x", content: [{ type: "text", text: "hi" }] },
    ...extra,
  };
}

/** Every file's text under a folder, joined. */
function allText(path: string): string {
  let text = "";
  for (const name of readdirSync(path, { recursive: true, withFileTypes: true })) {
    if (name.isFile()) text += readFileSync(join(name.parentPath, name.name), "utf8");
  }
  return text;
}

interface LeftOut {
  file: string;
  what: string;
  reason: string;
  count: number;
  lines: number[];
}

describe("issue 31: sub-agent .meta.json and session files are read without links or FIFOs", () => {
  /** A session with one sub-agent `agent-a1` whose `.meta.json` is made by `meta`. */
  function sessionWithSubagent(name: string, meta: (path: string) => void): string {
    const root = fresh(name);
    const session = "5e551011-0000-4000-8000-000000000001";
    writeFileSync(
      join(root, `${session}.jsonl`),
      jsonl([userLine(session, "u1"), assistantLine(session, "a1", "u1")]),
    );
    const subagents = join(root, session, "subagents");
    mkdirSync(subagents, { recursive: true });
    const agent = { isSidechain: true, agentId: "a1" };
    writeFileSync(
      join(subagents, "agent-a1.jsonl"),
      jsonl([userLine(session, "s1", agent), assistantLine(session, "s2", "s1", agent)]),
    );
    meta(join(subagents, "agent-a1.meta.json"));
    return root;
  }

  it("issue 31: a linked .meta.json is not copied into the package; the import reports it and goes on", async () => {
    const secret = join(fresh("outside"), "secret.txt");
    writeFileSync(secret, "OUTSIDE-SECRET-TEXT");
    const source = sessionWithSubagent("linked-meta", (path) => symlinkSync(secret, path));
    const into = join(folder, "linked-meta-out");
    const result = await run(["import", "claude-code", source, "--into", into]);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/imported 2,/);
    expect(allText(into)).not.toContain("OUTSIDE-SECRET-TEXT");
    expect(result.out).toMatch(/sub-agent \.meta\.json: .*it is a symbolic link/);
  });

  it("issue 31: a .meta.json that is a FIFO does not hang the import, into packages or a database", async () => {
    const source = sessionWithSubagent("fifo-meta", (path) => execFileSync("mkfifo", [path]));
    const packages = await run(["import", "claude-code", source, "--into", join(folder, "fifo")]);
    expect(packages.code).toBe(0);
    expect(packages.out).toMatch(/imported 2,/);
    expect(packages.out).toMatch(/sub-agent \.meta\.json: .*it is a FIFO/);
    const database = `sqlite:${join(folder, "fifo.sqlite")}`;
    const chains = await run([
      "import",
      "claude-code",
      source,
      "--into",
      database,
      "--subject",
      "u",
    ]);
    expect(chains.err).toBe("");
    expect(chains.code).toBe(0);
    expect(chains.out).toMatch(/imported 2,/);
    expect(chains.out).toMatch(/sub-agent \.meta\.json: .*it is a FIFO/);
  }, 20_000);

  it("issue 31: a .meta.json over the size cap is reported, not read", async () => {
    const source = sessionWithSubagent("big-meta", (path) =>
      writeFileSync(path, `{"agentType":"${"x".repeat(2 * 1024 * 1024)}"}`),
    );
    const into = join(folder, "big-meta-out");
    const result = await run(["import", "claude-code", source, "--into", into]);
    expect(result.code).toBe(0);
    expect(allText(into)).not.toContain("x".repeat(1000));
    expect(result.out).toMatch(/sub-agent \.meta\.json: .*more than the 1048576 an import reads/);
  });

  it("issue 31: a session file that is a FIFO named on the command line is reported, not waited on", async () => {
    const fifo = join(fresh("fifo-session"), "session.jsonl");
    execFileSync("mkfifo", [fifo]);
    const result = await run(["import", "claude-code", fifo, "--into", join(folder, "ff")]);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/unreadable .*session\.jsonl: not read: it is a FIFO/);
  }, 20_000);
});

describe("issue 31: JSON nested deeper than the HTTP API's limit", () => {
  const nest = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

  function deepSession(name: string): string {
    const root = fresh(name);
    const session = "deep0001";
    const deep = `{"type":"assistant","sessionId":"${session}","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{"a":${nest(6000)}}}]}}`;
    writeFileSync(
      join(root, "deep.jsonl"),
      jsonl([userLine(session, "u1"), deep, assistantLine(session, "a2", "u1")]),
    );
    // Another file after it is still imported.
    writeFileSync(join(root, "later.jsonl"), jsonl([userLine("later0001", "u1")]));
    return root;
  }

  it("issue 31: 6,000 levels are one line left out (file and line named), into packages; the rest goes on", async () => {
    const source = deepSession("deep-packages");
    const result = await run([
      "import",
      "claude-code",
      source,
      "--into",
      join(folder, "deep-out"),
      "--json",
    ]);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out) as {
      totals: { imported: number };
      leftOut: LeftOut[];
    };
    expect(report.totals.imported).toBe(2);
    const deep = report.leftOut.find((entry) => /nested deeper than 1000/.test(entry.reason));
    expect(deep?.file).toBe(join(source, "deep.jsonl"));
    expect(deep?.lines).toEqual([2]);
  });

  it("issue 31: the same into a database", async () => {
    const source = deepSession("deep-database");
    const database = `sqlite:${join(folder, "deep.sqlite")}`;
    const result = await run([
      "import",
      "claude-code",
      source,
      "--into",
      database,
      "--subject",
      "u",
    ]);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/imported 2,/);
    expect(result.out).toMatch(
      /unreadable line: 1 line\(s\) in 1 file\(s\): nested deeper than 1000/,
    );
  });

  it("issue 31: a trajectory file nested too deep is left out, into a rows file and a database; the next file is imported", async () => {
    const root = fresh("deep-trajectories");
    const deep = `{"history":[{"role":"user","content":${nest(6000)}}]}`;
    writeFileSync(join(root, "a-deep.traj"), deep);
    writeFileSync(
      join(root, "b-fine.traj"),
      JSON.stringify({ history: [{ role: "user", content: "hi" }] }),
    );
    const rows = await run([
      "import",
      "swe-agent",
      root,
      "--into",
      join(folder, "deep-rows.jsonl"),
    ]);
    const database = `sqlite:${join(folder, "deep-jobs.sqlite")}`;
    const jobs = await run(["import", "swe-agent", root, "--into", database, "--subject", "u"]);
    for (const result of [rows, jobs]) {
      expect(result.err).toBe("");
      expect(result.code).toBe(0);
      expect(result.out).toMatch(/imported 1,/);
      expect(result.out).toMatch(/file: 1 record\(s\) in 1 file\(s\): nested deeper than 1000/);
    }
  });
});

describe("issue 31: junk lines are counted, with a bounded sample", () => {
  it("issue 31: 1,000,000 junk lines leave a count and 1,000 line numbers; the heap stays bounded", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const junk = Buffer.from("junk\n".repeat(1_000_000) + JSON.stringify(userLine("j1", "u1")));
    gc();
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();
    const result = importClaudeCodeFile("junk.jsonl", junk);
    const seconds = (performance.now() - started) / 1000;
    gc();
    const retained = process.memoryUsage().heapUsed - before;
    const entry = result.leftOut.find((left) => left.what === "unreadable line");
    expect(entry?.count).toBe(1_000_000);
    expect(entry?.lines).toHaveLength(1000);
    expect(entry?.lines[999]).toBe(1000);
    expect(result.account).toMatchObject({ lines: 1_000_001, imported: 1, leftOut: 1_000_000 });
    // The report holds a thousand numbers, not a million (a million would be megabytes).
    expect(retained).toBeLessThan(1024 * 1024);
    expect(JSON.stringify(result.leftOut).length).toBeLessThan(10_000);
    expect(seconds).toBeLessThan(5);
  });

  it("issue 31: the import command's report of a junk file holds the count and the sample", async () => {
    const root = fresh("junk");
    writeFileSync(
      join(root, "junk.jsonl"),
      "junk\n".repeat(5000) + JSON.stringify(userLine("j2", "u1")),
    );
    const result = await run([
      "import",
      "claude-code",
      root,
      "--into",
      join(folder, "j"),
      "--json",
    ]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out) as { leftOut: LeftOut[] };
    expect(report.leftOut).toEqual([
      {
        file: join(root, "junk.jsonl"),
        what: "unreadable line",
        reason: "not JSON: the line is kept in the source only",
        count: 5000,
        lines: Array.from({ length: 1000 }, (_, index) => index + 1),
      },
    ]);
  });
});

describe("issue 31: session ids too long for a folder name", () => {
  it("issue 31: a 300-character id gets a shortened name with a hash; the full id is kept; a re-run finds it", async () => {
    const root = fresh("long");
    const id = `s${"x".repeat(299)}`;
    writeFileSync(
      join(root, "long.jsonl"),
      jsonl([userLine(id, "u1"), assistantLine(id, "a1", "u1")]),
    );
    const into = join(folder, "long-out");
    const first = await run(["import", "claude-code", root, "--into", into]);
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/imported 1,/);
    const [name] = readdirSync(into);
    expect(name?.length).toBe(255);
    expect(name).toMatch(/^claude-code-sxxxx.*-[0-9a-f]{16}$/);
    const saved = readFileSync(join(into, name ?? "", "agent", "conversation.json"), "utf8");
    expect(saved).toContain(`\\"sourceId\\":\\"${id}\\"`);
    const again = await run(["import", "claude-code", root, "--into", into]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/imported 0, updated 0, skipped as already imported 1, refused 0/);
    expect(readdirSync(into)).toEqual([name]);
  });
});

describe("issue 31: escape sequences from imported files are printed escaped", () => {
  const session = "e5c0001";

  async function importEscapes(name: string) {
    const root = fresh(name);
    writeFileSync(
      join(root, "escapes.jsonl"),
      jsonl([
        userLine(session, "u1"),
        assistantLine(session, "a1", "u1", {
          message: {
            role: "assistant",
            model: "\u001b]0;owned\u0007\u009b2J",
            content: [{ type: "text", text: "hi" }],
          },
        }),
        { type: "\u001b[31mred\u001b[0m", sessionId: session },
      ]),
    );
    const into = join(folder, `${name}-out`);
    return { into, ...(await run(["import", "claude-code", root, "--into", into])) };
  }

  it("issue 31: in the import summary", async () => {
    const imported = await importEscapes("escapes-summary");
    expect(imported.code).toBe(0);
    expect(imported.out).not.toMatch(/[\u001b\u0007\u009b]/);
    expect(imported.out).toContain("\\x1b[31mred\\x1b[0m line");
  });

  it("issue 31: in archive show", async () => {
    const { into } = await importEscapes("escapes-show");
    const shown = await run(["archive", "show", join(into, `claude-code-${session}`)]);
    expect(shown.code).toBe(0);
    expect(shown.out).not.toMatch(/[\u001b\u0007\u009b]/);
    expect(shown.out).toContain("model: \\x1b]0;owned\\x07\\u009b2J");
  });
});

describe("issue 31: one rule for subject names", () => {
  const refused = ["a b", "tab\there", "esc\u001b[2J", "<img src=x onerror=alert(1)>", ""];
  const database = join(folder, "subjects.sqlite");

  /** What `keys create` says of a subject (the message after the command's name). */
  async function keysCreateRefusal(subject: string): Promise<string> {
    const keys = await run(["keys", "create", "--db", database, "--subject", subject]);
    expect(keys.code).toBe(1);
    const message = keys.err.replace(/^verbatim keys create: /, "");
    expect(message).toMatch(/^the subject uid is not valid/);
    return message;
  }

  it("issue 31: import --subject refuses what keys create refuses, with its exit code and message", async () => {
    const fixture = join(fixturesRoot, "claude-code", "1.0-real");
    for (const subject of refused) {
      const message = await keysCreateRefusal(subject);
      const into = `sqlite:${database}`;
      const imported = await run([
        "import",
        "claude-code",
        fixture,
        "--into",
        into,
        "--subject",
        subject,
      ]);
      expect(imported.code).toBe(1);
      expect(imported.err).toBe(`verbatim import: ${message}`);
    }
  });

  it("issue 31: export --subject refuses what keys create refuses, with its exit code and message", async () => {
    for (const subject of refused) {
      const message = await keysCreateRefusal(subject);
      const exported = await run([
        "export",
        "--from",
        `sqlite:${database}`,
        "--subject",
        subject,
        "--conversation",
        "c1",
        "--to",
        "openai-jsonl",
      ]);
      expect(exported.code).toBe(1);
      expect(exported.err).toBe(`verbatim export: ${message}`);
    }
  });
});
