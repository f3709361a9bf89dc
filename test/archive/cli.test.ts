import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { newPackage, seedPackage, snapshotTree } from "./helpers.js";

const ROOT = new URL("../..", import.meta.url).pathname;

/** The keys of `verbatim archive show --json`, fixed in docs/cli.md. */
const SHOW_KEYS = [
  "agentFolder",
  "blocks",
  "estimatedCost",
  "formatVersion",
  "historyMessages",
  "images",
  "items",
  "lastRoundUsage",
  "model",
  "package",
  "provider",
  "queued",
  "readable",
  "reason",
  "turns",
  "unsent",
  "usage",
];

async function run(argv: string[]) {
  const io = bufferIO();
  const code = await main(argv, io);
  return { code, out: io.out().toString(), err: io.err() };
}

async function unreadablePackage(): Promise<string> {
  const folder = await newPackage();
  await mkdir(join(folder, "agent"));
  await writeFile(join(folder, "agent", "conversation.json"), '{ "formatVersion" : 3 }');
  return folder;
}

describe("verbatim archive show", () => {
  it("A12 A15 --json describes the seed's example package with the documented keys", async () => {
    const folder = await seedPackage();
    const before = await snapshotTree(folder);
    const { code, out, err } = await run(["archive", "show", folder, "--json"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out.endsWith("\n")).toBe(true);
    expect(out.trim().split("\n")).toHaveLength(1);
    const summary = JSON.parse(out) as Record<string, unknown>;
    expect(Object.keys(summary).sort()).toEqual(SHOW_KEYS);
    expect(summary).toMatchObject({
      agentFolder: true,
      readable: true,
      reason: null,
      formatVersion: 1,
      provider: "anthropic",
      model: "claude-opus-5-5",
      items: { total: 3, byType: { assistant: 1, tool: 1, user: 1 } },
      historyMessages: 5,
      blocks: { total: 8, byType: { imageOmitted: 2, text: 4, toolCall: 1, toolResult: 1 } },
      turns: 1,
      queued: 0,
      unsent: 0,
      images: { kept: 0, keptBytes: 0, omitted: 2, unreadable: 1 },
      usage: { input: 2500, output: 80, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0 },
      lastRoundUsage: { input: 1500, output: 40 },
      estimatedCost: { kind: "estimated", dollars: 0.0213 },
    });
    expect(await snapshotTree(folder)).toEqual(before);
  });

  it("A14 --json says why an unreadable conversation cannot be read, and its version", async () => {
    const { code, out } = await run(["archive", "show", await unreadablePackage(), "--json"]);
    expect(code).toBe(0);
    const summary = JSON.parse(out) as Record<string, unknown>;
    expect(Object.keys(summary).sort()).toEqual(SHOW_KEYS);
    expect(summary).toMatchObject({ agentFolder: true, readable: false, formatVersion: 3 });
    expect(summary["reason"]).toContain("format 3");
  });

  it("A13 a package without agent/ shows no folder, readable", async () => {
    const { code, out } = await run(["archive", "show", await newPackage(), "--json"]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      agentFolder: false,
      readable: true,
      historyMessages: 0,
    });
  });

  it("prints a readable text description without --json", async () => {
    const { code, out } = await run(["archive", "show", await seedPackage()]);
    expect(code).toBe(0);
    expect(out).toContain("readable: yes");
    expect(out).toContain("history messages: 5");
    expect(out).toContain("model: claude-opus-5-5");
  });

  it("exits 2 for a missing package and for bad usage", async () => {
    expect((await run(["archive", "show", "/nonexistent/Poster.silverpoint"])).code).toBe(2);
    expect((await run(["archive", "show"])).code).toBe(2);
    expect((await run(["archive", "show", "a", "--bogus"])).code).toBe(2);
  });
});

describe("verbatim archive check", () => {
  it("A13 exits 0 when agent/ is absent", async () => {
    expect((await run(["archive", "check", await newPackage()])).code).toBe(0);
  });

  it("A12 exits 0 for readable format 1", async () => {
    expect((await run(["archive", "check", await seedPackage()])).code).toBe(0);
  });

  it("A14 exits 1 when unreadable, with the reason on stderr", async () => {
    const { code, err } = await run(["archive", "check", await unreadablePackage()]);
    expect(code).toBe(1);
    expect(err).toContain("format 3");
    expect(err.split("\n")).toHaveLength(2);
  });
});

describe("verbatim archive resave", () => {
  it("A14 an unreadable package is kept as is: prints kept, exits 1", async () => {
    const folder = await unreadablePackage();
    const before = await snapshotTree(folder);
    const { code, out, err } = await run(["archive", "resave", folder]);
    expect(out).toBe("kept\n");
    expect(code).toBe(1);
    expect(err).toContain("format 3");
    expect(await snapshotTree(folder)).toEqual(before);
  });

  it("A15 runs as a real command: rewritten, then unchanged (node bin/verbatim.js)", async () => {
    const folder = await seedPackage();
    const exec = promisify(execFile);
    const first = await exec(process.execPath, ["bin/verbatim.js", "archive", "resave", folder], {
      cwd: ROOT,
    });
    expect(first.stdout).toBe("rewritten\n");
    const second = await exec(process.execPath, ["bin/verbatim.js", "archive", "resave", folder], {
      cwd: ROOT,
    });
    expect(second.stdout).toBe("unchanged\n");
    const shown = await exec(
      process.execPath,
      ["bin/verbatim.js", "archive", "show", folder, "--json"],
      { cwd: ROOT },
    );
    expect(JSON.parse(shown.stdout)).toMatchObject({
      readable: true,
      images: { kept: 0, omitted: 2, unreadable: 0 },
    });
    const failed = await exec(
      process.execPath,
      ["bin/verbatim.js", "archive", "check", "/nonexistent"],
      {
        cwd: ROOT,
      },
    ).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2 });
  }, 30_000);
});
