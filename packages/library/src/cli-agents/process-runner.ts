import { spawn, spawnSync } from "node:child_process";
import { StringDecoder } from "node:string_decoder";

/** How a CLI run ended, as far as the process is concerned. */
export type CliProcessOutcome =
  /** The process ran and exited by itself (see `exitCode` and `signal`). */
  | "exited"
  /** The executable does not exist on PATH (or at the given path). */
  | "notFound"
  /** The executable exists but could not be started (permissions, not a program, …). */
  | "spawnFailed"
  /** The run was cancelled through the abort signal; the whole process tree was ended. */
  | "cancelled";

export interface CliProcessOptions {
  /** The executable, looked up on PATH when it has no slash (`claude`, `codex`). */
  readonly command: string;
  readonly args: readonly string[];
  /** Written to standard input, which is then closed. */
  readonly stdin: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
  /** Called with each line of standard output (without its line ending); blank lines are skipped. */
  readonly onLine: (line: string) => void;
  /** How long a cancelled process tree gets between SIGTERM and SIGKILL. Default 2000 ms. */
  readonly killGraceMs?: number;
}

export interface CliProcessResult {
  readonly outcome: CliProcessOutcome;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last 64 KiB of standard error (UTF-8, decoded leniently). */
  readonly stderr: string;
  /** The operating system's message when the process could not be started. */
  readonly startError?: string;
  /** The process id, while it ran (for tests that check the tree was ended). */
  readonly pid?: number;
}

const STDERR_LIMIT = 64 * 1024;

/**
 * Runs a CLI agent as a child process: writes the message to its standard input, hands every
 * line of its standard output to `onLine` as it arrives, keeps the tail of its standard error,
 * and, when `signal` aborts, ends the whole process tree (the child runs in its own process
 * group; SIGTERM to the group, SIGKILL after a grace period). Never rejects: every way a run
 * can end is a `CliProcessResult`.
 */
export function runCliProcess(options: CliProcessOptions): Promise<CliProcessResult> {
  return new Promise((resolve) => {
    if (options.signal?.aborted === true) {
      resolve({ outcome: "cancelled", exitCode: null, signal: null, stderr: "" });
      return;
    }
    const isWindows = process.platform === "win32";
    const child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so that cancelling can end the CLI and everything it started.
      detached: !isWindows,
      windowsHide: true,
    });

    let stderr = "";
    let cancelled = false;
    let startError: NodeJS.ErrnoException | undefined;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const decoder = new StringDecoder("utf8");
    let pending = "";

    const emitLines = (text: string, final: boolean): void => {
      pending += text;
      let start = 0;
      for (;;) {
        const newline = pending.indexOf("\n", start);
        if (newline === -1) break;
        deliver(pending.slice(start, newline));
        start = newline + 1;
      }
      pending = pending.slice(start);
      if (final && pending.length > 0) {
        deliver(pending);
        pending = "";
      }
    };
    const deliver = (raw: string): void => {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (line.trim() === "") return;
      try {
        options.onLine(line);
      } catch {
        // A consumer's bug must not leave the process running unread.
      }
    };

    child.stdout.on("data", (chunk: Buffer) => emitLines(decoder.write(chunk), false));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      if (stderr.length > STDERR_LIMIT * 2) stderr = stderr.slice(-STDERR_LIMIT);
    });
    // The CLI may exit before reading its input; a broken pipe is then not our failure.
    child.stdin.on("error", () => undefined);

    const endTree = (signal: NodeJS.Signals): void => {
      const pid = child.pid;
      if (pid === undefined) return;
      if (isWindows) {
        spawnSync("taskkill", ["/pid", String(pid), "/T", "/F"], { windowsHide: true });
        return;
      }
      try {
        process.kill(-pid, signal);
      } catch {
        // The group is already gone.
      }
    };
    const onAbort = (): void => {
      if (settled) return;
      cancelled = true;
      endTree("SIGTERM");
      killTimer = setTimeout(() => endTree("SIGKILL"), options.killGraceMs ?? 2000);
      killTimer.unref();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });

    child.on("error", (error: NodeJS.ErrnoException) => {
      startError = error;
    });
    child.on("close", (code, signal) => {
      settled = true;
      if (killTimer !== undefined) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      emitLines(decoder.end(), true);
      // Whatever the CLI left running in its group goes with it.
      if (cancelled) endTree("SIGKILL");
      const tail = stderr.length > STDERR_LIMIT ? stderr.slice(-STDERR_LIMIT) : stderr;
      const base = { exitCode: code, signal, stderr: tail };
      const pid = child.pid === undefined ? {} : { pid: child.pid };
      if (startError !== undefined && child.pid === undefined) {
        resolve({
          ...base,
          outcome: startError.code === "ENOENT" ? "notFound" : "spawnFailed",
          startError: startError.message,
        });
      } else if (cancelled) {
        resolve({ ...base, ...pid, outcome: "cancelled" });
      } else {
        resolve({ ...base, ...pid, outcome: "exited" });
      }
    });

    if (child.pid !== undefined) child.stdin.end(options.stdin, "utf8");
  });
}
