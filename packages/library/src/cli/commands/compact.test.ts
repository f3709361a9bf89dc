import { execFile } from "node:child_process";
import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../main.js";
import { bufferIO } from "../io.js";
import { openLiveConversation } from "../../conversation/open.js";
import { tokenPrice } from "../../pricing/cost.js";
import { scriptedBackend } from "../../../../../test/support/scripted-backend.js";
import { startLocalProvider } from "../../../../../test/support/provider-servers/index.js";

const run = promisify(execFile);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A package whose saved conversation has `turns` turns, run on "anthropic claude-sonnet-4-5". */
async function savedPackage(turns: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "verbatim-compact-cli-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const pkg = join(dir, "Poster.pkg");
  await mkdir(pkg);
  const steps = Array.from({ length: turns }, (_, index) => ({
    text: `answer ${index + 1}`,
    usage: { input: 1000 * (index + 1), cacheRead: 500, output: 10 },
  }));
  const opened = await openLiveConversation(pkg, {
    backend: scriptedBackend(steps, "anthropic", "claude-sonnet-4-5"),
  });
  for (let index = 0; index < turns; index += 1) {
    opened.conversation.send(`message ${index + 1}`);
    await opened.conversation.whenIdle();
  }
  await opened.save();
  return pkg;
}

const inputUsage = (input: number) => ({
  input,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  webSearchRequests: 0,
});

describe("verbatim compact", () => {
  it("A19 --dry-run --json previews the saved package: available, input tokens and estimated cost", async () => {
    const pkg = await savedPackage(3);
    const io = bufferIO();
    expect(await main(["compact", pkg, "--dry-run", "--json"], io)).toBe(0);
    const dollars = tokenPrice("anthropic", "claude-sonnet-4-5", inputUsage(3500));
    expect(dollars).toBeGreaterThan(0);
    expect(JSON.parse(io.out().toString("utf8"))).toEqual({
      available: true,
      inputTokens: 3500,
      estimatedCost: { kind: "estimated", dollars },
    });
  });

  it("A19 --provider and --model price the preview for another model", async () => {
    const pkg = await savedPackage(3);
    const io = bufferIO();
    const args = [
      "compact",
      pkg,
      "--dry-run",
      "--json",
      "--provider",
      "openai-chat",
      "--model",
      "gpt-4o",
    ];
    expect(await main(args, io)).toBe(0);
    const preview = JSON.parse(io.out().toString("utf8")) as { estimatedCost: unknown };
    expect(preview.estimatedCost).toEqual({
      kind: "estimated",
      dollars: tokenPrice("openai-chat", "gpt-4o", inputUsage(3500)),
    });
    const unpriced = bufferIO();
    expect(
      await main(["compact", pkg, "--dry-run", "--json", "--model", "no-such-model"], unpriced),
    ).toBe(0);
    expect(JSON.parse(unpriced.out().toString("utf8"))).toMatchObject({
      estimatedCost: { kind: "unknown" },
    });
  });

  it("A22 two turns or fewer: not available, with the reason, exit 1", async () => {
    const pkg = await savedPackage(2);
    const io = bufferIO();
    expect(await main(["compact", pkg, "--dry-run", "--json"], io)).toBe(1);
    expect(JSON.parse(io.out().toString("utf8"))).toMatchObject({
      available: false,
      reason: "tooFewTurns",
    });
    const text = bufferIO();
    expect(await main(["compact", pkg, "--dry-run"], text)).toBe(1);
    expect(text.out().toString("utf8")).toMatch(
      /^compaction not available \(tooFewTurns\): 2500 input tokens/,
    );
  });

  it("A22 a CLI provider is not offered compaction", async () => {
    const pkg = await savedPackage(3);
    const io = bufferIO();
    expect(
      await main(["compact", pkg, "--dry-run", "--json", "--provider", "claude-code"], io),
    ).toBe(1);
    expect(JSON.parse(io.out().toString("utf8"))).toEqual({
      available: false,
      reason: "cliBackend",
      inputTokens: 3500,
      estimatedCost: { kind: "notBilled" },
    });
  });

  it("A20 without --dry-run it compacts through the provider layer and saves", async () => {
    const pkg = await savedPackage(3);
    const local = await startLocalProvider("anthropic");
    cleanups.push(() => local.close());
    local.script.push({ text: "The user sent message 1.", usage: { input: 900, output: 12 } });
    const io = bufferIO({
      env: { ANTHROPIC_BASE_URL: local.baseUrl, ANTHROPIC_API_KEY: "sk-ant-local" },
    });
    expect(await main(["compact", pkg, "--json"], io)).toBe(0);
    expect(JSON.parse(io.out().toString("utf8"))).toMatchObject({
      compacted: true,
      historyMessages: 5,
    });
    expect(local.requests).toHaveLength(1);
    const reopened = await openLiveConversation(pkg, { backend: scriptedBackend([]) });
    const saved = reopened.conversation.snapshot();
    expect(saved.history[0]?.content[0]).toEqual({
      type: "text",
      text: "# Conversation so far\nThe user sent message 1.",
    });
    expect(saved.sentFacts).toEqual([{ message: 1 }, { message: 3 }]);
    expect(saved.items.at(-1)).toMatchObject({ type: "notice", kind: "compacted" });
  });

  it("A19 missing package folder exits 2; the command runs as bin/verbatim.js", async () => {
    const io = bufferIO();
    expect(await main(["compact", "/nonexistent/package", "--dry-run"], io)).toBe(2);
    expect(io.err()).toMatch(/not a folder/);
    const pkg = await savedPackage(3);
    const { stdout } = await run(process.execPath, [
      "bin/verbatim.js",
      "compact",
      pkg,
      "--dry-run",
      "--json",
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ available: true, inputTokens: 3500 });
  });
});
