import { spawn } from "node:child_process";
import { cp, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { openArchive } from "../../../packages/library/src/archive/index.js";
import { openArchiveWith } from "../../../packages/library/src/archive/archive.js";
import {
  atomicFileWriter,
  type SaveStep,
} from "../../../packages/library/src/archive/file-writer.js";
import { encodeConversation } from "../../../packages/library/src/format/encode.js";
import type { SavedConversation } from "../../../packages/library/src/format/conversation-schema.js";
import { naiveFileWriter } from "./naive-writer.js";

/** One save to interrupt: the package before it (a folder to copy) and what it saves. */
export interface CrashScenario {
  readonly name: string;
  /** A package folder holding the old state; copied before each kill. */
  readonly template: string;
  readonly conversation: SavedConversation;
  readonly images: ReadonlyMap<string, Uint8Array>;
  readonly turnStarted: boolean;
}

export interface CampaignOptions {
  readonly child: string;
  readonly workFolder: string;
  readonly writer: "atomic" | "naive";
  readonly pieceBytes: number;
  /** Random-moment kills per scenario. */
  readonly randomKills: number;
  readonly concurrency: number;
  /** Stop after this many failures (a broken writer needs only a few to be proven broken). */
  readonly stopAfterFailures?: number;
}

export interface KillReport {
  kills: number;
  /** step name → how many kills hit it (`after save` when the save had finished). */
  hits: Map<string, number>;
  /** Which state each kill left: old or new conversation. */
  outcomes: { old: number; new: number };
  failures: string[];
}

/** What a package opens as: the conversation's canonical bytes and the notices. */
async function openedState(folder: string): Promise<string> {
  return stateOf(await openArchive(folder));
}

function stateOf(opened: Awaited<ReturnType<typeof openArchive>>): string {
  const notices = opened.notices.map((notice) => notice.kind).join(",");
  return `${notices}|${encodeConversation(opened.conversation).toString("base64")}`;
}

async function stepsOf(scenario: CrashScenario, options: CampaignOptions): Promise<SaveStep[]> {
  const folder = await copyOf(scenario, options);
  const steps: SaveStep[] = [];
  const writerOptions = {
    onStep: (step: SaveStep) => steps.push(step),
    pieceBytes: options.pieceBytes,
  };
  const writer =
    options.writer === "naive" ? naiveFileWriter(writerOptions) : atomicFileWriter(writerOptions);
  const opened = await openArchiveWith(folder, {}, { writer });
  if (scenario.turnStarted) opened.archive.turnStarted();
  await opened.archive.save(scenario.conversation, scenario.images);
  return steps;
}

let copies = 0;
async function copyOf(scenario: CrashScenario, options: CampaignOptions): Promise<string> {
  const folder = join(options.workFolder, `kill-${copies++}`, "Poster.silverpoint");
  await cp(scenario.template, folder, { recursive: true, verbatimSymlinks: true });
  return folder;
}

interface Run {
  readonly folder: string;
  readonly stdout: string;
  readonly killed: boolean;
}

function runChild(
  options: CampaignOptions,
  scenarioFile: string,
  args: string[],
  killAfterReadyMs: number | undefined,
): Promise<{ stdout: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.child, scenarioFile, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
      if (killAfterReadyMs !== undefined && timer === undefined && stdout.includes("ready\n")) {
        timer = setTimeout(() => child.kill("SIGKILL"), killAfterReadyMs);
      }
    });
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (timer !== undefined) clearTimeout(timer);
      if (signal === null && code !== 0) reject(new Error(`child failed (${code}): ${stderr}`));
      else resolve({ stdout, signal });
    });
  });
}

/**
 * Kills a child process (SIGKILL) at every step of each scenario's save and at random moments,
 * reopens the package after each kill and checks that it opens as the old or the new
 * conversation, never anything else (a torn file, an extra notice, a lost image).
 */
export async function runKillCampaign(
  scenarios: readonly CrashScenario[],
  options: CampaignOptions,
): Promise<KillReport> {
  const report: KillReport = {
    kills: 0,
    hits: new Map(),
    outcomes: { old: 0, new: 0 },
    failures: [],
  };
  const tasks: (() => Promise<void>)[] = [];
  for (const scenario of scenarios) {
    const oldState = await openedState(scenario.template);
    const steps = await stepsOf(scenario, options);
    const newFolder = await copyOf(scenario, options);
    const opened = await openArchive(newFolder);
    if (scenario.turnStarted) opened.archive.turnStarted();
    await opened.archive.save(scenario.conversation, scenario.images);
    const newState = await openedState(newFolder);
    const childScenario = {
      conversation: encodeConversation(scenario.conversation).toString("base64"),
      images: [...scenario.images].map(([sha256, bytes]) => [
        sha256,
        Buffer.from(bytes).toString("base64"),
      ]),
      turnStarted: scenario.turnStarted,
      writer: options.writer,
      pieceBytes: options.pieceBytes,
    };
    const check = async (folder: string, hit: string, label: string): Promise<void> => {
      report.kills++;
      report.hits.set(hit, (report.hits.get(hit) ?? 0) + 1);
      let opened;
      try {
        opened = await openArchive(folder);
      } catch (error) {
        report.failures.push(`${label}: open threw ${String(error)}`);
        return;
      }
      const state = stateOf(opened);
      if (state === oldState) report.outcomes.old++;
      else if (state === newState) report.outcomes.new++;
      else {
        const notice = state.startsWith("|") ? "" : ` (notice: ${state.split("|")[0]})`;
        report.failures.push(
          `${label}: opened as neither the old nor the new conversation${notice}`,
        );
        return;
      }
      // The package still saves cleanly afterwards, and leaves no temporary file behind.
      if (scenario.turnStarted) opened.archive.turnStarted();
      await opened.archive.save(scenario.conversation, scenario.images);
      if ((await openedState(folder)) !== newState) {
        report.failures.push(
          `${label}: the save after the crash did not give the new conversation`,
        );
      }
      const leftovers = (await listAll(folder)).filter((path) => path.includes(".verbatim-"));
      if (leftovers.length > 0) report.failures.push(`${label}: left ${leftovers.join(", ")}`);
    };
    const perScenarioFile = async (folder: string): Promise<string> => {
      const file = join(folder, "..", "scenario.json");
      await writeFile(file, JSON.stringify({ ...childScenario, packageDir: folder }));
      return file;
    };
    for (let target = 0; target <= steps.length; target++) {
      tasks.push(async () => {
        const folder = await copyOf(scenario, options);
        const { signal } = await runChild(
          options,
          await perScenarioFile(folder),
          ["step", String(target)],
          undefined,
        );
        if (signal !== "SIGKILL")
          report.failures.push(`${scenario.name} step ${target}: not killed`);
        const hit = target < steps.length ? `before ${steps[target]}` : "after save";
        await check(folder, hit, `${scenario.name}, kill before step ${target} (${hit})`);
        await rm(join(folder, ".."), { recursive: true, force: true });
      });
    }
    const duration = await measureSave(options, scenario, perScenarioFile);
    for (let index = 0; index < options.randomKills; index++) {
      const delay = Math.random() * duration;
      tasks.push(async () => {
        const folder = await copyOf(scenario, options);
        const { stdout, signal } = await runChild(
          options,
          await perScenarioFile(folder),
          ["random"],
          delay,
        );
        const lines = stdout.trim().split("\n");
        const last = lines[lines.length - 1] ?? "";
        const hit =
          signal !== "SIGKILL" || last === "done"
            ? "after save"
            : last === "ready"
              ? "before the first step"
              : `during ${last.slice(5)}`;
        await check(
          folder,
          `random: ${hit}`,
          `${scenario.name}, random kill at ${delay.toFixed(2)} ms (${hit})`,
        );
        await rm(join(folder, ".."), { recursive: true, force: true });
      });
    }
  }
  let next = 0;
  const workers = Array.from({ length: options.concurrency }, async () => {
    while (next < tasks.length) {
      if (
        options.stopAfterFailures !== undefined &&
        report.failures.length >= options.stopAfterFailures
      )
        return;
      const task = tasks[next++];
      if (task !== undefined) await task();
    }
  });
  await Promise.all(workers);
  return report;
}

/** How long the child's save takes after "ready" (ms), to spread the random kills over it. */
async function measureSave(
  options: CampaignOptions,
  scenario: CrashScenario,
  scenarioFileFor: (folder: string) => Promise<string>,
): Promise<number> {
  const folder = await copyOf(scenario, options);
  const started = { at: 0 };
  const child = spawn(process.execPath, [options.child, await scenarioFileFor(folder), "random"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  let ended = 0;
  await new Promise<void>((resolve) => {
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
      if (started.at === 0 && stdout.includes("ready\n")) started.at = performance.now();
      if (stdout.includes("done\n") && ended === 0) ended = performance.now();
    });
    child.on("close", () => resolve());
  });
  return Math.max(1, (ended || performance.now()) - started.at);
}

async function listAll(folder: string): Promise<string[]> {
  return (await readdir(folder, { recursive: true })).map(String);
}

/** The per-step report, one line per step. */
export function formatReport(title: string, report: KillReport): string {
  const lines = [
    `${title}: ${report.kills} kills; opened as old ${report.outcomes.old}, as new ${report.outcomes.new}; failures ${report.failures.length}`,
  ];
  for (const [hit, count] of [...report.hits].sort(([a], [b]) => (a < b ? -1 : 1))) {
    lines.push(`  ${hit.padEnd(36)} ${count}`);
  }
  return lines.join("\n");
}

export async function newWorkFolder(parent: string): Promise<string> {
  return mkdtemp(join(parent, "crash-"));
}
