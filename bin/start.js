#!/usr/bin/env node
// `npm start`: builds the console page when it is missing or older than its sources, then runs
// `verbatim serve` on the embedded SQLite database in ./.verbatim/ on 127.0.0.1. It prints the
// URL (with the operator token in the fragment, which the page reads and never sends) and the
// token itself. Extra arguments go to `verbatim serve` (e.g. `npm start -- --port 9000`).
// Without any provider API key in the environment it adds `--upstream echo` (the offline demo
// model, docs/cli.md) and says so, so that the console and the API answer on a fresh machine.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const built = join(root, "packages", "server", "dist", "web", "index.html");

function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = 0;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

const webSource = join(root, "web");
const needsBuild =
  existsSync(webSource) && (!existsSync(built) || newest(webSource) > statSync(built).mtimeMs);
if (needsBuild) {
  process.stdout.write("building the console page (web/ → packages/server/dist/web)…\n");
  const vite = join(root, "node_modules", "vite", "bin", "vite.js");
  const result = spawnSync(process.execPath, [vite, "build", webSource, "--logLevel", "warn"], {
    stdio: "inherit",
    cwd: root,
  });
  if (result.status !== 0) {
    process.stderr.write("npm start: building the console page failed (see above)\n");
    process.exit(1);
  }
}

// The variables the server reads provider keys from (docs/server/README.md, "Configuration").
const PROVIDER_KEY_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "OPENROUTER_API_KEY",
];
const extra = process.argv.slice(2);
const hasKey = PROVIDER_KEY_VARIABLES.some((name) => (process.env[name] ?? "") !== "");
const choosesUpstream = extra.some(
  (word) => word === "--upstream" || word.startsWith("--upstream="),
);
const upstream = [];
if (!hasKey && !choosesUpstream) {
  upstream.push("--upstream", "echo");
  process.stdout.write(
    "npm start: no provider API key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY), " +
      "so the echo demo upstream answers every model offline (it repeats the last user text and calls a tool the text names; docs/cli.md). " +
      "Set a key and restart to use a real provider.\n",
  );
}

const args = ["serve", "--db", "./.verbatim/verbatim.sqlite", "--host", "127.0.0.1", ...upstream];
process.argv = [process.argv[0] ?? "node", join(root, "bin", "verbatim.js"), ...args, ...extra];
await import("./verbatim.js");
