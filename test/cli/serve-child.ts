/** Runs `verbatim serve` (node bin/verbatim.js) in a child process until its banner is out. */
import { spawn, type ChildProcess } from "node:child_process";
import { BIN, ROOT } from "./run-cli.js";

export interface ServeChild {
  readonly child: ChildProcess;
  readonly url: string;
  /** What it printed on stdout so far. */
  readonly stdout: () => string;
  /** What it printed on stderr so far. */
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** The environment without any provider key, so that nothing can reach a real provider. */
export function withoutProviderKeys(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !/_API_KEY$|_BASE_URL$/.test(name)) kept[name] = value;
  }
  return kept;
}

export async function startServeChild(
  args: readonly string[],
  env: Record<string, string>,
  command: readonly string[] = [BIN, "serve"],
  cwd: string = ROOT,
): Promise<ServeChild> {
  const child = spawn(process.execPath, [...command, "--port", "0", ...args], {
    cwd,
    env: { VERBATIM_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out} ${err}`)), 90_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      // The banner ends with the operator token on its own line.
      if (match?.[1] !== undefined && /\nvop_\S+\n/.test(out)) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", () => {
      clearTimeout(timer);
      reject(new Error(`serve exited: ${out} ${err}`));
    });
  });
  return {
    child,
    url,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
