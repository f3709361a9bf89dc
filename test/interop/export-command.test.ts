import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../packages/library/src/core/hash.js";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { fixturesRoot } from "./fixture-files.js";

const folder = mkdtempSync(join(tmpdir(), "verbatim-export-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const packages = join(folder, "packages");

async function run(argv: string[]) {
  const io = bufferIO({ cwd: folder });
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}

// A real PNG from the corpus (an Inspect log's data URL), sent in a Claude Code session.
const png =
  /data:image\/png;base64,([A-Za-z0-9+/=]+)/.exec(
    readFileSync(join(fixturesRoot, "inspect/log_images.json"), "utf8"),
  )?.[1] ?? "";
const imageSession = [
  {
    type: "user",
    uuid: "u1",
    parentUuid: null,
    sessionId: "image-session",
    message: {
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
      ],
    },
  },
  {
    type: "assistant",
    uuid: "a1",
    parentUuid: "u1",
    sessionId: "image-session",
    message: {
      id: "msg_1",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "A picture." }],
      usage: { input_tokens: 10, output_tokens: 3 },
    },
  },
]
  .map((line) => JSON.stringify(line))
  .join("\n");

beforeAll(async () => {
  mkdirSync(join(folder, "sessions"));
  writeFileSync(join(folder, "sessions", "image-session.jsonl"), `${imageSession}\n`);
  expect(
    (
      await run([
        "import",
        "claude-code",
        join(fixturesRoot, "claude-code"),
        join(folder, "sessions"),
        "--into",
        packages,
      ])
    ).code,
  ).toBe(0);
  expect(
    (await run(["import", "codex", join(fixturesRoot, "codex"), "--into", packages])).code,
  ).toBe(0);
});

describe("verbatim export --to openai-jsonl|chatml-jsonl", () => {
  it("gives the same bytes on every run, one line per package with a history, in name order", async () => {
    for (const format of ["openai-jsonl", "chatml-jsonl"]) {
      const first = await run(["export", packages, "--to", format]);
      const second = await run(["export", packages, "--to", format]);
      expect(first.code, first.err).toBe(0);
      expect(sha256Hex(second.out)).toBe(sha256Hex(first.out));
      const lines = first.out.toString("utf8").trimEnd().split("\n");
      const withHistory =
        readdirSync(packages).length - Number(/(\d+) skipped/.exec(first.err)?.[1] ?? "0");
      expect(lines.length).toBe(withHistory);
      for (const line of lines)
        expect(Array.isArray((JSON.parse(line) as { messages: unknown }).messages)).toBe(true);
    }
  });

  it("openai-jsonl: tool calls answered by tool messages, no metadata, images as data URLs", async () => {
    const { out } = await run([
      "export",
      packages,
      "--to",
      "openai-jsonl",
      "--system",
      join(fixturesRoot, "SOURCES.md"),
    ]);
    let images = 0;
    for (const line of out.toString("utf8").trimEnd().split("\n")) {
      const { messages } = JSON.parse(line) as { messages: Record<string, unknown>[] };
      expect(messages[0]?.role).toBe("system");
      const open = new Set<string>();
      for (const message of messages) {
        expect(message.metadata).toBeUndefined();
        for (const call of (message.tool_calls as { id: string }[] | undefined) ?? [])
          open.add(call.id);
        if (message.role === "tool") open.delete(String(message.tool_call_id));
        if (Array.isArray(message.content)) {
          for (const part of message.content as { type: string; image_url?: { url: string } }[]) {
            if (part.type === "image_url") {
              expect(part.image_url?.url).toBe(`data:image/png;base64,${png}`);
              images++;
            }
          }
        }
      }
      expect([...open]).toEqual([]);
    }
    expect(images).toBe(1);
  });

  it("a stored-rows file gives one line per job turn, the same bytes every time", async () => {
    const rows = join(folder, "rows.jsonl");
    expect(
      (await run(["import", "swe-agent", join(fixturesRoot, "swe-agent"), "--into", rows])).code,
    ).toBe(0);
    const turns = new Set(
      readFileSync(rows, "utf8")
        .trimEnd()
        .split("\n")
        .map((line) => (JSON.parse(line) as { turn_id: string }).turn_id),
    );
    const first = await run(["export", rows, "--to", "openai-jsonl"]);
    const second = await run(["export", rows, "--to", "openai-jsonl"]);
    expect(first.code, first.err).toBe(0);
    expect(second.out.equals(first.out)).toBe(true);
    const lines = first.out.toString("utf8").trimEnd().split("\n");
    expect(lines.length).toBe(turns.size);
    for (const line of lines) {
      const { messages } = JSON.parse(line) as { messages: { role: string }[] };
      expect(messages[0]?.role).toBe("system");
    }
  });

  it("refuses an unknown format and a path that holds no package", async () => {
    expect((await run(["export", packages, "--to", "parquet"])).code).toBe(2);
    const missing = await run(["export", join(folder, "nothing-here"), "--to", "openai-jsonl"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/not a package folder nor a folder of packages/);
  });
});
