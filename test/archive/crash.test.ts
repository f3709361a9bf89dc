import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openArchive } from "../../packages/library/src/archive/index.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import { emptyConversation } from "../../packages/library/src/format/empty.js";
import type { Block, Message } from "../../packages/library/src/history/message.js";
import { compileForChildren } from "./crash/compile.js";
import {
  formatReport,
  newWorkFolder,
  runKillCampaign,
  type CrashScenario,
} from "./crash/harness.js";
import { imagesOf, newPackage, testImage } from "./helpers.js";

/**
 * Crash safety: a child process saving a package is killed with SIGKILL before every step of
 * the save (each folder creation, temporary file, piece of a large write, fsync, rename and
 * removal) and at random moments; after each kill the package must open as the old or the new
 * conversation, never a torn one and never with a notice it did not have. The same campaign
 * against a deliberately non-atomic writer must find a torn package.
 */
const ROOT = new URL("../..", import.meta.url).pathname;
const PIECE_BYTES = 4096;

function longText(index: number): string {
  return `Turn ${index}: ` + "日本語のテキストと emoji 🎨 and plain words. ".repeat(40);
}

function conversationOf(turns: number, imagesAt: Map<number, Block>): SavedConversation {
  const history: Message[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const image = imagesAt.get(turn);
    history.push({
      role: "user",
      content: [{ type: "text", text: longText(turn) }, ...(image === undefined ? [] : [image])],
    });
    history.push({ role: "assistant", content: [{ type: "text", text: `Answer ${turn}` }] });
  }
  return {
    ...emptyConversation(),
    provider: "anthropic",
    model: "claude-test",
    items: history.map((_, index) => ({
      id: `item-${index}`,
      type: "assistant",
      text: `${index}`,
    })),
    history,
    sentFacts: Array.from({ length: turns }, (_, turn) => ({ message: turn * 2 })),
  };
}

let child = "";
let work = "";
let scenarios: CrashScenario[] = [];

beforeAll(async () => {
  // A memory file system when there is one: fsync is free there, and a SIGKILL (unlike a power
  // loss) leaves the page cache as it was, so what the test proves is the same.
  work = await mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "verbatim-crash-"));
  child = await compileForChildren(ROOT, join(work, "compiled"));
  const [one, two, three, four] = [1, 2, 3, 4].map((seed) =>
    testImage(12_000 + seed * 1000, 70 + seed),
  );
  if (one === undefined || two === undefined || three === undefined || four === undefined) return;
  const all = imagesOf(one, two, three, four);

  const first = await newPackage();
  const firstConversation = conversationOf(
    6,
    new Map([
      [0, one.block],
      [2, two.block],
      [5, three.block],
    ]),
  );

  const older = conversationOf(
    4,
    new Map([
      [0, one.block],
      [3, two.block],
    ]),
  );
  const grown = conversationOf(
    8,
    new Map([
      [3, two.block],
      [5, three.block],
      [7, four.block],
    ]),
  );
  const saved = await newPackage();
  await (await openArchive(saved)).archive.save(older, all);

  const unreadable = await newPackage();
  await mkdir(join(unreadable, "agent", "images"), { recursive: true });
  await writeFile(join(unreadable, "agent", "conversation.json"), '{ "formatVersion" : 2 }\n');
  await writeFile(join(unreadable, "agent", "images", `${one.sha256}.png`), one.bytes);

  scenarios = [
    {
      name: "first save",
      template: first,
      conversation: firstConversation,
      images: all,
      turnStarted: false,
    },
    {
      name: "grow and drop an image",
      template: saved,
      conversation: grown,
      images: all,
      turnStarted: false,
    },
    {
      name: "remove agent/",
      template: saved,
      conversation: emptyConversation(),
      images: all,
      turnStarted: false,
    },
    {
      name: "replace an unreadable agent/",
      template: unreadable,
      conversation: conversationOf(3, new Map([[1, four.block]])),
      images: all,
      turnStarted: true,
    },
  ];
});

afterAll(async () => {
  if (work !== "") await rm(work, { recursive: true, force: true });
});

describe("crash safety", () => {
  it("A14 A15 a save killed (SIGKILL) at every step and at random moments leaves the old or the new conversation, never a torn one", async () => {
    const report = await runKillCampaign(scenarios, {
      child,
      workFolder: await newWorkFolder(work),
      writer: "atomic",
      pieceBytes: PIECE_BYTES,
      randomKills: 30,
      concurrency: Math.min(4, availableParallelism()),
    });
    console.log(formatReport("atomic writer", report));
    expect(report.failures).toEqual([]);
    expect(report.kills).toBeGreaterThanOrEqual(200);
    expect(report.outcomes.old).toBeGreaterThan(0);
    expect(report.outcomes.new).toBeGreaterThan(0);
    for (const step of [
      "makeFolder",
      "openTemporary",
      "write",
      "fsyncFile",
      "rename",
      "fsyncFolder",
      "removeFile",
      "removeFolder",
    ]) {
      expect(report.hits.get(`before ${step}`) ?? 0).toBeGreaterThan(0);
    }
  }, 400_000);

  it("the same campaign fails against a deliberately non-atomic writer", async () => {
    const report = await runKillCampaign(scenarios, {
      child,
      workFolder: await newWorkFolder(work),
      writer: "naive",
      pieceBytes: PIECE_BYTES,
      randomKills: 0,
      concurrency: Math.min(4, availableParallelism()),
      stopAfterFailures: 1,
    });
    console.log(formatReport("non-atomic writer", report));
    expect(report.failures.length).toBeGreaterThan(0);
  }, 200_000);
});
