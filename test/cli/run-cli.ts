/**
 * Runs the real `verbatim` command (node bin/verbatim.js) as a child process and collects its
 * exit code and output. `recordPackages` also names every npm package the process loaded (read
 * by ./record-loaded-packages.mjs, a module resolution hook).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const BIN = join(ROOT, "bin", "verbatim.js");
const HOOK = join(ROOT, "test", "cli", "record-loaded-packages.mjs");

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The npm packages loaded, when recorded. */
  readonly packages: readonly string[];
}

export async function runCli(
  args: readonly string[],
  options: {
    readonly cwd?: string;
    readonly env?: Record<string, string>;
    readonly recordPackages?: boolean;
  } = {},
): Promise<CliRun> {
  const folder =
    options.recordPackages === true ? mkdtempSync(join(tmpdir(), "verbatim-load-")) : "";
  const record = join(folder, "packages.txt");
  const nodeArgs = options.recordPackages === true ? ["--import", HOOK] : [];
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: {
      ...process.env,
      VERBATIM_LOG_LEVEL: "warn",
      ...(options.recordPackages === true ? { VERBATIM_RECORD_PACKAGES: record } : {}),
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  let packages: string[] = [];
  if (options.recordPackages === true) {
    packages = readFileSync(record, "utf8")
      .split("\n")
      .filter((line) => line !== "");
    rmSync(folder, { recursive: true, force: true });
  }
  return { code, stdout, stderr, packages };
}
