import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { fixturesRoot } from "./fixture-files.js";

const folder = mkdtempSync(join(tmpdir(), "verbatim-import-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function run(argv: string[]) {
  const io = bufferIO({ cwd: folder });
  const code = await main(argv, io);
  return { code, out: io.out().toString("utf8"), err: io.err() };
}

/** Every file under a folder with its bytes and modification time. */
function snapshot(path: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string): void => {
    for (const name of readdirSync(current)) {
      const full = join(current, name);
      const info = statSync(full);
      if (info.isDirectory()) walk(full);
      else files.set(full, `${info.mtimeMs}:${readFileSync(full).toString("base64")}`);
    }
  };
  walk(path);
  return files;
}

interface Report {
  totals: { imported: number; updated: number; unchanged: number; refused: number; files: number };
  conversations: { name: string; path: string; outcome: string; reason?: string }[];
  files: { lines: number; imported: number; leftOut: number }[];
}

describe("verbatim import claude-code|codex --into <folder>", () => {
  const into = join(folder, "packages");

  it("imports a whole Claude Code project folder and a Codex sessions folder, one package per conversation", async () => {
    const claude = await run([
      "import",
      "claude-code",
      join(fixturesRoot, "claude-code"),
      "--into",
      into,
      "--json",
    ]);
    expect(claude.err).toBe("");
    expect(claude.code).toBe(0);
    const report = JSON.parse(claude.out) as Report;
    expect(report.totals.imported).toBe(report.conversations.length);
    expect(report.totals.imported).toBeGreaterThan(40);
    for (const file of report.files) expect(file.imported + file.leftOut).toBe(file.lines);
    const codex = await run(["import", "codex", join(fixturesRoot, "codex"), "--into", into]);
    expect(codex.code).toBe(0);
    expect(codex.out).toMatch(/imported 10, updated 0, skipped as already imported 0, refused 0/);
    expect(codex.out).toMatch(/left out \(each reported/);
  });

  it("re-running the import changes nothing (same ids, same source bytes)", async () => {
    const before = snapshot(into);
    const again = await run([
      "import",
      "claude-code",
      join(fixturesRoot, "claude-code"),
      "--into",
      into,
      "--json",
    ]);
    const report = JSON.parse(again.out) as Report;
    expect(report.totals).toMatchObject({ imported: 0, updated: 0, refused: 0 });
    expect(report.totals.unchanged).toBe(report.conversations.length);
    expect(snapshot(into)).toEqual(before);
  });

  it("a session that grew is updated in place; a package holding another conversation is refused", async () => {
    const source = join(folder, "grown");
    mkdirSync(source, { recursive: true });
    const file = join(source, "55604662-cf2a-4331-851a-ec234028f8ca.jsonl");
    cpSync(join(fixturesRoot, "claude-code/2.1-real/short.jsonl"), file);
    const target = join(folder, "grown-into");
    expect((await run(["import", "claude-code", file, "--into", target])).code).toBe(0);
    writeFileSync(
      file,
      readFileSync(file, "utf8") +
        JSON.stringify({ type: "summary", summary: "A later title", leafUuid: "x" }) +
        "\n",
    );
    const grown = await run(["import", "claude-code", file, "--into", target, "--json"]);
    expect((JSON.parse(grown.out) as Report).totals).toMatchObject({ updated: 1, imported: 0 });
    // Another file with the same session id: never mixed into the package of the first.
    const copy = join(folder, "copy");
    mkdirSync(copy, { recursive: true });
    cpSync(file, join(copy, "renamed.jsonl"));
    const sameSession = await run([
      "import",
      "claude-code",
      join(copy, "renamed.jsonl"),
      "--into",
      target,
    ]);
    expect(sameSession.code).toBe(1);
    expect(sameSession.out).toMatch(
      /imported from another file \(55604662-cf2a-4331-851a-ec234028f8ca\.jsonl\)/,
    );
    // The same package name, but the codex source: never overwritten.
    const other = join(folder, "other.jsonl");
    writeFileSync(
      other,
      `${JSON.stringify({ type: "session_meta", payload: { id: "x" } })}\n${JSON.stringify({ type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] } })}\n`,
    );
    const clash = join(target, "codex-x");
    cpSync(join(target, "claude-code-55604662-cf2a-4331-851a-ec234028f8ca"), clash, {
      recursive: true,
    });
    const refused = await run(["import", "codex", other, "--into", target]);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(
      /refused codex-x: the package already holds another conversation \(claude-code 55604662/,
    );
  });

  it("after an import, verbatim render gives the next request with every tool call answered", async () => {
    const packages = readdirSync(into).filter((name) => statSync(join(into, name)).isDirectory());
    expect(packages.length).toBeGreaterThan(50);
    for (const name of packages) {
      const rendered = await run([
        "render",
        join(into, name),
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--message",
        "go on",
      ]);
      expect(rendered.code, `${name}: ${rendered.err}`).toBe(0);
      const body = JSON.parse(rendered.out) as {
        messages: {
          role: string;
          content: { type: string; id?: string; tool_use_id?: string }[];
        }[];
      };
      body.messages.forEach((message, index) => {
        const calls = message.content
          .filter((block) => block.type === "tool_use")
          .map((block) => block.id);
        if (calls.length === 0) return;
        const next = body.messages[index + 1]?.content ?? [];
        const answered = new Set(
          next.filter((block) => block.type === "tool_result").map((block) => block.tool_use_id),
        );
        expect(
          calls.filter((id) => !answered.has(id)),
          `${name}: message ${index}`,
        ).toEqual([]);
      });
    }
  });

  it("refuses an unknown source, a missing --into, and --subject without a database target", async () => {
    expect((await run(["import", "cursor", "x", "--into", "y"])).code).toBe(2);
    expect((await run(["import", "codex", "x"])).err).toMatch(/--into is required/);
    const subject = await run([
      "import",
      "codex",
      fixturesRoot,
      "--into",
      "folder",
      "--subject",
      "alice",
    ]);
    expect(subject.code).toBe(2);
    expect(subject.err).toMatch(/--subject goes with a database target/);
  });
});

describe("verbatim import swe-agent|openhands|inspect --into <rows.jsonl>", () => {
  it("writes stored rows that verbatim trajectory project reads; a re-run leaves the file as it is", async () => {
    const rows = join(folder, "rows.jsonl");
    for (const source of ["swe-agent", "openhands", "inspect"]) {
      const result = await run(["import", source, join(fixturesRoot, source), "--into", rows]);
      expect(result.code, result.err).toBe(0);
      expect(result.out).toMatch(/turns imported [1-9]/);
    }
    const projected = await run(["trajectory", "project", rows, "--view", "model-visible"]);
    expect(projected.code, projected.err).toBe(0);
    const before = readFileSync(rows);
    const stamp = statSync(rows).mtimeMs;
    const again = await run([
      "import",
      "inspect",
      join(fixturesRoot, "inspect"),
      "--into",
      rows,
      "--json",
    ]);
    expect(
      (JSON.parse(again.out) as { totals: { imported: number; unchanged: number } }).totals,
    ).toMatchObject({ imported: 0, unchanged: 4 });
    expect(readFileSync(rows)).toEqual(before);
    expect(statSync(rows).mtimeMs).toBe(stamp);
  });
});
