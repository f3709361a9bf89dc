/**
 * Three (or N) `verbatim serve` processes on one database, each on a loopback port of its own
 * that it keeps across restarts, so a client can go on naming the same URLs. `kill(index)` is
 * `kill -9`; `restart(index)` starts the same server again on the same port.
 */
import { startServeChild, type ServeChild } from "../../../test/cli/serve-child.js";
import { freePort } from "../../../test/support/free-port.js";

export interface Cluster {
  readonly urls: readonly string[];
  /** SIGKILL to server `index`, then waits for the process to be gone. */
  kill(index: number): Promise<void>;
  /** Starts server `index` again (same port, same settings); resolves once it listens. */
  restart(index: number): Promise<void>;
  /** Servers started so far, restarts included. */
  readonly starts: () => number;
  /** What every server process printed on stderr, the killed ones' included. */
  readonly stderr: () => string;
  /** SIGTERM to every running server. */
  stop(): Promise<void>;
}

export async function startCluster(
  count: number,
  databaseText: string,
  env: Record<string, string>,
): Promise<Cluster> {
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const running: (ServeChild | undefined)[] = ports.map(() => undefined);
  const logs: string[] = [];
  let starts = 0;
  const start = async (index: number) => {
    // A later `--port` wins over the `--port 0` startServeChild puts first.
    const child = await startServeChild(
      ["--db", databaseText, "--host", "127.0.0.1", "--port", String(ports[index])],
      env,
    );
    starts++;
    running[index] = child;
  };
  const keepLog = (child: ServeChild | undefined) => {
    if (child !== undefined) logs.push(child.stderr());
  };
  await Promise.all(ports.map((_, index) => start(index)));
  return {
    urls: ports.map((port) => `http://127.0.0.1:${port}`),
    async kill(index) {
      const child = running[index];
      running[index] = undefined;
      if (child === undefined) return;
      child.child.kill("SIGKILL");
      await child.exited;
      keepLog(child);
    },
    restart: (index) => start(index),
    starts: () => starts,
    stderr: () => [...logs, ...running.map((child) => child?.stderr() ?? "")].join(""),
    async stop() {
      await Promise.all(
        running.map(async (child, index) => {
          running[index] = undefined;
          if (child === undefined) return;
          await child.stop();
          keepLog(child);
        }),
      );
    },
  };
}
