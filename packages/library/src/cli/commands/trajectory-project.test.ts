import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  storedIdentities,
  workedExampleRows,
} from "../../../../../test/support/trajectory-fixtures.js";
import { bufferIO } from "../io.js";
import { main } from "../main.js";

const run = promisify(execFile);
const root = new URL("../../../../../", import.meta.url).pathname;
const folder = mkdtempSync(join(tmpdir(), "verbatim-trajectory-cli-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
}

const rowsFile = file(
  "rows.jsonl",
  workedExampleRows.map((row) => JSON.stringify(row)).join("\n") + "\n",
);

async function project(argv: string[]) {
  const io = bufferIO({ cwd: folder });
  const code = await main(["trajectory", "project", ...argv], io);
  return { code, out: io.out().toString("utf8"), err: io.err() };
}

describe("verbatim trajectory project", () => {
  it("B9 --view chatml prints the ChatML projection as one JSON line", async () => {
    const { code, out, err } = await project([rowsFile, "--view", "chatml"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out.endsWith("}\n")).toBe(true);
    const view = JSON.parse(out) as {
      messages: { role: string }[];
      metadata: object;
      turns: object[];
    };
    expect(Object.keys(view)).toEqual(["messages", "metadata", "turns"]);
    expect(view.messages).toHaveLength(9);
    expect(view.metadata).toEqual({ redacted: true, content_truncated: false });
  });

  it("B12 --view model-visible prints {messages, metadata} with no stored identity", async () => {
    const { code, out } = await project([rowsFile, "--view", "model-visible"]);
    expect(code).toBe(0);
    const view = JSON.parse(out) as object;
    expect(Object.keys(view)).toEqual(["messages", "metadata"]);
    for (const identity of storedIdentities(workedExampleRows)) expect(out).not.toContain(identity);
    expect(out).toContain('"tool_call_id":"call_2"');
  });

  it("B12 --page-limit cuts content to fit and sets content_truncated", async () => {
    const { code, out } = await project([
      rowsFile,
      "--view",
      "model-visible",
      "--page-limit",
      "1250",
    ]);
    expect(code).toBe(0);
    expect(Buffer.byteLength(out.trimEnd())).toBeLessThanOrEqual(1250);
    expect((JSON.parse(out) as { metadata: object }).metadata).toEqual({
      redacted: true,
      content_truncated: true,
    });
    const tooSmall = await project([rowsFile, "--view", "chatml", "--page-limit", "10"]);
    expect(tooSmall.code).toBe(1);
    expect(tooSmall.err).toMatch(/^verbatim trajectory project: the page takes \d+ bytes/);
  });

  it("B9 an empty file is an empty trajectory", async () => {
    const { code, out } = await project([file("empty.jsonl", "\n"), "--view", "model-visible"]);
    expect(code).toBe(0);
    expect(out).toBe('{"messages":[],"metadata":{"redacted":false,"content_truncated":false}}\n');
  });

  it("reports every bad line with its line number and projects nothing", async () => {
    const good = JSON.stringify(workedExampleRows[0]);
    const bad = file(
      "bad.jsonl",
      [
        good,
        "{not json",
        "",
        JSON.stringify({ ...workedExampleRows[1], position: -1 }),
        '{"turn_id":"t"}',
        good,
      ].join("\n"),
    );
    const { code, out, err } = await project([bad, "--view", "chatml"]);
    expect(code).toBe(1);
    expect(out).toBe("");
    const lines = err.trimEnd().split("\n");
    expect(lines[0]).toMatch(/bad\.jsonl:2: not valid JSON: /);
    expect(lines[1]).toMatch(/bad\.jsonl:4: not a stored row: position: /);
    expect(lines[2]).toMatch(/bad\.jsonl:5: not a stored row: /);
    expect(lines[3]).toMatch(/bad\.jsonl: 3 bad line\(s\); nothing projected/);
  });

  it("reports inconsistent rows (a repeated position) as a failed check", async () => {
    const twice = file(
      "twice.jsonl",
      [workedExampleRows[0], workedExampleRows[0]].map((row) => JSON.stringify(row)).join("\n"),
    );
    const { code, err } = await project([twice, "--view", "chatml"]);
    expect(code).toBe(1);
    expect(err).toMatch(/position 0 appears twice/);
  });

  it("usage errors exit 2: missing --view, unknown view, bad limit, missing file", async () => {
    expect((await project([rowsFile])).code).toBe(2);
    const unknown = await project([rowsFile, "--view", "raw"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/--view must be chatml or model-visible/);
    expect((await project([rowsFile, "--view", "chatml", "--page-limit", "12kb"])).code).toBe(2);
    const missing = await project(["nope.jsonl", "--view", "chatml"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read nope\.jsonl/);
  });

  it("B12 runs as a child process with the same bytes as in process", async () => {
    const { stdout } = await run(
      process.execPath,
      ["bin/verbatim.js", "trajectory", "project", rowsFile, "--view", "model-visible"],
      { cwd: root },
    );
    expect(stdout).toBe((await project([rowsFile, "--view", "model-visible"])).out);
  });
});
