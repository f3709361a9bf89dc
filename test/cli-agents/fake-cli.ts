import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import type { CliTurnInput } from "../../packages/library/src/conversation/index.js";
import type { Item } from "../../packages/library/src/format/index.js";
import type { Message } from "../../packages/library/src/history/index.js";

/**
 * The fake `claude` and `codex` executables of test/fixtures/cli-agents/bin: they record their
 * arguments and standard input and replay stream lines captured from the real CLIs (each
 * fixture's first line says where it came from).
 */
export const FIXTURES = resolve("test/fixtures/cli-agents");
const BIN = join(FIXTURES, "bin");

export interface FakeCall {
  readonly cli: string;
  readonly args: string[];
  readonly stdin: string;
  readonly pid: number;
}

export interface FakeCli {
  /** The environment to run the backend with: the fakes first on PATH. */
  readonly env: NodeJS.ProcessEnv;
  calls(): FakeCall[];
  /** Pids of the children the `hang` option started. */
  children(): number[];
}

/** A fake CLI that plays `plan` (fixture paths relative to the fixtures folder, with options). */
export function fakeCli(plan: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): FakeCli {
  const record = join(mkdtempSync(join(tmpdir(), "verbatim-fake-cli-")), "calls.jsonl");
  const entries = plan.map((entry) => {
    const [fixture, ...options] = entry.split("|");
    return [join(FIXTURES, fixture ?? ""), ...options].join("|");
  });
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  delete env["ANTHROPIC_API_KEY"];
  delete env["CODEX_API_KEY"];
  Object.assign(env, extraEnv, {
    PATH: `${BIN}${delimiter}${process.env["PATH"] ?? ""}`,
    FAKE_CLI_RECORD: record,
    FAKE_CLI_PLAN: entries.join(";"),
  });
  const lines = (): Record<string, unknown>[] =>
    existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as Record<string, unknown>)
      : [];
  return {
    env,
    calls: () => lines().filter((line) => "cli" in line) as unknown as FakeCall[],
    children: () =>
      lines().flatMap((line) => (typeof line["child"] === "number" ? [line["child"]] : [])),
  };
}

/** The input of one turn, collecting the panel items the backend reports (replaced by id). */
export function turnInput(
  message: string,
  options: {
    restoredTranscript?: string;
    signal?: AbortSignal;
    onItem?: (item: Item) => void;
  } = {},
): { input: CliTurnInput; items: Item[] } {
  const items: Item[] = [];
  let next = 0;
  const userMessage: Message = { role: "user", content: [{ type: "text", text: message }] };
  const input: CliTurnInput = {
    message,
    userMessage,
    images: () => undefined,
    ...(options.restoredTranscript === undefined
      ? {}
      : { restoredTranscript: options.restoredTranscript }),
    signal: options.signal ?? new AbortController().signal,
    onItem: (item) => {
      const at = items.findIndex((existing) => existing.id === item.id);
      if (at === -1) items.push(item);
      else items[at] = item;
      options.onItem?.(item);
    },
    newItemId: () => `item-${++next}`,
  };
  return { input, items };
}

/** Whether a process is still running (a zombie waiting for its parent counts as ended). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return true;
  }
}
