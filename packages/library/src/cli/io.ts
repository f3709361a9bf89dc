/** Where a command writes: the process's streams, or buffers in tests. */
export interface CliIO {
  stdout(data: string | Uint8Array): void;
  stderr(text: string): void;
  /** The environment the command sees (process.env by default). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The working directory relative paths resolve against. */
  readonly cwd: string;
}

export const processIO: CliIO = {
  stdout: (data) => {
    process.stdout.write(data);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
  env: process.env,
  cwd: process.cwd(),
};

/** An IO that keeps what a command writes, for in-process tests. */
export function bufferIO(overrides: Partial<Pick<CliIO, "env" | "cwd">> = {}): CliIO & {
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
    out: () => Buffer.concat(out),
    err: () => err.join(""),
  };
}
