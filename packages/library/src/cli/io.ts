/** Where a command writes: the process's streams, or buffers in tests. */
export interface CliIO {
  stdout(data: string | Uint8Array): void;
  stderr(text: string): void;
  /** The environment the command sees (process.env by default). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The working directory relative paths resolve against. */
  readonly cwd: string;
  /** Whether stderr is a terminal (a progress bar is drawn there only then). */
  readonly stderrIsTTY?: boolean;
}

/** The process's standard streams, environment and working folder. */
export const processIO: CliIO = {
  stdout: (data) => {
    process.stdout.write(data);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  env: process.env,
  cwd: process.cwd(),
  get stderrIsTTY() {
    return process.stderr.isTTY === true;
  },
};

/** An IO that keeps what a command writes, for in-process tests. */
export function bufferIO(
  overrides: Partial<Pick<CliIO, "env" | "cwd" | "stderrIsTTY">> = {},
): CliIO & {
  readonly out: () => Buffer;
  readonly err: () => string;
} {
  const out: Buffer[] = [];
  const err: string[] = [];
  return {
    stdout: (data) => out.push(typeof data === "string" ? Buffer.from(data) : Buffer.from(data)),
    stderr: (text) => err.push(text),
    env: overrides.env ?? process.env,
    cwd: overrides.cwd ?? process.cwd(),
    stderrIsTTY: overrides.stderrIsTTY === true,
    out: () => Buffer.concat(out),
    err: () => err.join(""),
  };
}
