import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { switchFromEnv } from "./env.js";

/** Where the console page is built (the server package's dist/web, which the package ships). */
export const BUILT_PAGE_FOLDER = fileURLToPath(new URL("../../dist/web", import.meta.url));
/** The page's sources and Vite, present in a checkout of the repository only. */
const REPOSITORY = fileURLToPath(new URL("../../../../", import.meta.url));
const SOURCE_FOLDER = resolve(REPOSITORY, "web");
const VITE = resolve(REPOSITORY, "node_modules/vite/bin/vite.js");
/** This package's place in the checkout (so an installed package never builds an app's web/). */
const CHECKOUT_MARK = resolve(REPOSITORY, "packages/server/package.json");

/** How to get the page when it is missing: the notice on start and the page at `/`. */
export const BUILD_HINT =
  "In a checkout of the repository run `npm run build` (or `npm start`, which builds it); the verbatim-llm-server package ships it built.";

export interface ConsolePage {
  /** The folder served at `/`, or false when there is no page to serve. */
  readonly root: string | false;
  /** Why there is no page (root false). */
  readonly missing?: string;
}

function build(folder: string): Promise<string | undefined> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      [VITE, "build", SOURCE_FOLDER, "--outDir", folder, "--emptyOutDir", "--logLevel", "warn"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    child.on("error", (error) => done(error.message));
    child.on("exit", (code) =>
      done(code === 0 ? undefined : `vite exited with ${code}: ${errors.trim()}`),
    );
  });
}

/**
 * The console page `verbatim serve` serves (docs/console.md, "Serving the page"):
 * - the built page in `VERBATIM_WEB_ROOT` (a folder), else in the package's dist/web;
 * - when it is missing and the page's sources and Vite are there (a fresh checkout), it is
 *   built there first, saying so through `say` (unless `VERBATIM_WEB_BUILD=off`);
 * - otherwise there is none, and `missing` says why.
 */
export async function prepareConsolePage(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  say: (line: string) => void,
): Promise<ConsolePage> {
  const given = env["VERBATIM_WEB_ROOT"];
  const folder = given === undefined || given === "" ? BUILT_PAGE_FOLDER : resolve(cwd, given);
  const buildAllowed = switchFromEnv(env, "VERBATIM_WEB_BUILD") ?? true;
  if (existsSync(resolve(folder, "index.html"))) return { root: folder };
  const sources =
    existsSync(CHECKOUT_MARK) &&
    existsSync(resolve(SOURCE_FOLDER, "index.html")) &&
    existsSync(VITE);
  if (!sources) {
    return { root: false, missing: `the console page is not built (no ${folder}/index.html)` };
  }
  if (!buildAllowed) {
    return {
      root: false,
      missing: `the console page is not built (no ${folder}/index.html; VERBATIM_WEB_BUILD=off)`,
    };
  }
  say(`the console page is not built: building it from ${SOURCE_FOLDER} into ${folder}…`);
  const started = Date.now();
  const failure = await build(folder);
  if (failure !== undefined || !existsSync(resolve(folder, "index.html"))) {
    return {
      root: false,
      missing: `building the console page failed: ${failure ?? "no index.html was written"}`,
    };
  }
  say(`console page built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { root: folder };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The page `/` answers with when there is no console page: what is missing and how to build it. */
export function missingPageHtml(missing: string): string {
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>verbatim console: page not built</title>
<main style="font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem">
<h1>The console page is not built</h1>
<p>${escapeHtml(missing)}.</p>
<p>${escapeHtml(BUILD_HINT).replace(/`([^`]+)`/g, "<code>$1</code>")}</p>
<p>The server and its console routes (<code>/ai-gateway/…</code>, docs/server/README.md) work without it.</p>
</main>
</html>
`;
}
