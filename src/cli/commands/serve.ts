import pino from "pino";
import { startServer, DEFAULT_DATABASE, DEFAULT_HOST, DEFAULT_PORT } from "../../server/serve.js";
import { EXIT_OK, parseCommandArgs, usageError, type Command } from "../command.js";

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

export const serve: Command = {
  words: ["serve"],
  usage: "[--db <sqlite path | postgres url>] [--host H] [--port P]",
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
      },
      { min: 0, max: 0 },
    );
    const port = parsePort(this, values.port);
    const logger = pino(
      { level: io.env["VERBATIM_LOG_LEVEL"] ?? "info", base: { service: "verbatim" } },
      pino.destination({ fd: 2, sync: false }),
    );
    const server = await startServer({
      database: values.db ?? DEFAULT_DATABASE,
      host: values.host ?? DEFAULT_HOST,
      port,
      cwd: io.cwd,
      env: io.env,
      logger,
    });
    const location = server.database.location;
    const where = location.dialect === "sqlite" ? location.path : "PostgreSQL";
    io.stdout(
      [
        `verbatim server listening on ${server.url}`,
        `console page: ${server.url}/#token=${encodeURIComponent(server.operatorToken)}`,
        `database: ${location.dialect} ${where}`,
        `operator token${server.generatedToken ? " (generated; set VERBATIM_OPERATOR_TOKEN to choose one)" : " (from VERBATIM_OPERATOR_TOKEN)"}:`,
        server.operatorToken,
        "",
      ].join("\n"),
    );
    const signal = await shutdownSignal();
    logger.info({ signal }, "shutting down: finishing in-flight requests");
    await server.close();
    logger.info("stopped");
    logger.flush();
    // Nothing of the server is left; a client's lingering socket must not keep the process.
    setTimeout(() => process.exit(process.exitCode ?? EXIT_OK), 2000).unref();
    return EXIT_OK;
  },
};
