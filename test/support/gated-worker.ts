/**
 * A worker process for concurrency tests: `startGatedWorker(script, args)` runs a TypeScript
 * file of this checkout that prints `ready` once set up, waits for `go` on stdin (so that all
 * workers start their writes together), then prints its result as JSON and exits 0.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const root = new URL("../../", import.meta.url).pathname;

export interface GatedWorker<T> {
  /** Resolves when the worker printed `ready`. */
  readonly ready: Promise<void>;
  /** The worker's JSON result; rejects with its stderr when it exits non-zero. */
  readonly done: Promise<T>;
  /** Lets the worker start. */
  go(): void;
}

export function startGatedWorker<T>(script: string, args: readonly string[]): GatedWorker<T> {
  const child = spawn(process.execPath, ["bin/run-ts.js", script, ...args], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines = createInterface({ input: child.stdout });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const output: string[] = [];
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  lines.on("line", (line) => (line === "ready" ? onReady() : output.push(line)));
  const done = new Promise<T>((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(output.join("")) as T)
        : reject(new Error(`worker exited ${code}: ${stderr}`)),
    ),
  );
  return { ready, done, go: () => child.stdin.end("go\n") };
}
