import pino from "pino";
import { VerbatimError } from "verbatim-llm/core";
import { BUILD_HINT } from "../../server/console-page.js";
import { startServer, DEFAULT_DATABASE, DEFAULT_HOST, DEFAULT_PORT } from "../../server/serve.js";
import { upstreamConfigFromEnv } from "../../server/upstream/config.js";
import {
  echoEnvironment,
  startEchoUpstream,
  type EchoUpstream,
} from "../../server/upstream/echo.js";
import { EXIT_OK, parseCommandArgs, usageError, type Command } from "verbatim-llm/internal";

function parsePort(command: Command, text: string | undefined): number {
  if (text === undefined) return DEFAULT_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw usageError(command, `--port must be a number from 0 to 65535, not "${text}"`);
  }
  return port;
}

/** Resolves on the first SIGINT or SIGTERM. */
function shutdownSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: "is already in use by another program",
  EACCES: "needs privileges this process does not have",
  EADDRNOTAVAIL: "is on an address this machine does not have",
};

/** A listen failure as `port_unavailable` naming the port and what to do; else the error. */
function listenFailure(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const reason = typeof code === "string" ? LISTEN_FAILURES[code] : undefined;
  if (reason === undefined) return error;
  return new VerbatimError("port_unavailable", `port ${port} on ${host} ${reason} (${code})`, {
    where: "--port",
    hint:
      code === "EADDRNOTAVAIL"
        ? "Pass --host with an address of this machine (127.0.0.1, 0.0.0.0)"
        : "Stop the program that uses it, or pass another port: --port 9000 (npm start -- --port 9000); --port 0 picks a free one",
    cause: error,
  });
}

/** The banner's upstream line: the echo, or a warning when no provider can answer. */
function upstreamLines(
  echo: EchoUpstream | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  if (echo !== undefined) {
    return [
      "upstream: echo, the offline demo model, answers every model (no provider key is used; docs/cli.md)",
    ];
  }
  // The server has read the same environment already: this cannot throw here.
  if (Object.keys(upstreamConfigFromEnv(env).providers).length > 0) return [];
  return [
    "upstream: none: no provider API key is set, so /v1/responses answers 503 (upstream_not_configured); set one (docs/server/README.md, Configuration) or pass --upstream echo for the offline demo model",
  ];
}

export const serve: Command = {
  words: ["serve"],
  usage: "[--db <sqlite path | postgres url>] [--host H] [--port P] [--upstream echo]",
  summary:
    "Run the HTTP server (console routes, Responses API, jobs, console page); migrates the database first.",
  async run(args, io) {
    const { values } = parseCommandArgs(
      this,
      args,
      {
        db: { type: "string" },
        host: { type: "string" },
        port: { type: "string" },
        upstream: { type: "string" },
      },
      { min: 0, max: 0 },
    );
    const port = parsePort(this, values.port);
    if (values.upstream !== undefined && values.upstream !== "echo") {
      throw usageError(
        this,
        `--upstream takes "echo" (the offline demo model), not "${values.upstream}"; leave it out to use the providers whose API keys are set`,
      );
    }
    const host = values.host ?? DEFAULT_HOST;
    const logger = pino(
      { level: io.env["VERBATIM_LOG_LEVEL"] ?? "info", base: { service: "verbatim" } },
      pino.destination({ fd: 2, sync: false }),
    );
    const echo: EchoUpstream | undefined =
      values.upstream === "echo" ? await startEchoUpstream() : undefined;
    let server;
    try {
      server = await startServer({
        database: values.db ?? DEFAULT_DATABASE,
        host,
        port,
        cwd: io.cwd,
        env: echo === undefined ? io.env : echoEnvironment(io.env, echo),
        logger,
        say: (line) => io.stderr(`verbatim serve: ${line}\n`),
      });
    } catch (error) {
      await echo?.close();
      throw listenFailure(error, host, port);
    }
    // Listen for the signals before the banner: a supervisor may stop the server as soon as it
    // reads the banner, and a signal without a listener ends the process at once.
    const stopSignal = shutdownSignal();
    const location = server.database.location;
    const where = location.dialect === "sqlite" ? location.path : "PostgreSQL";
    io.stdout(
      [
        `verbatim server listening on ${server.url}`,
        server.consolePageMissing === undefined
          ? `console page: ${server.url}/#token=${encodeURIComponent(server.operatorToken)}`
          : `console page: none (${server.consolePageMissing}; ${server.url}/ says how to build it)`,
        `database: ${location.dialect} ${where}`,
        ...upstreamLines(echo, io.env),
        `operator token${server.generatedToken ? " (generated; set VERBATIM_OPERATOR_TOKEN to choose one)" : " (from VERBATIM_OPERATOR_TOKEN)"}:`,
        server.operatorToken,
        "",
      ].join("\n"),
    );
    if (server.consolePageMissing !== undefined) {
      io.stderr(`verbatim serve: ${server.consolePageMissing}. ${BUILD_HINT}\n`);
    }
    const signal = await stopSignal;
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    await server.close();
    await echo?.close();
    logger.info("stopped");
    logger.flush();
    // Nothing of the server is left; a client's lingering socket must not keep the process.
    setTimeout(() => process.exit(process.exitCode ?? EXIT_OK), 2000).unref();
    return EXIT_OK;
  },
};
