// Issue 16, "The public API", and issue 32, "A deliberate public surface": each entry point
// exports what a user of that layer calls (listed in docs/api.md, which
// test/generated-documents.test.ts keeps from drifting), one name has one meaning across all
// entry points, and what only the server package needs is in `verbatim-llm/internal`, which is
// not covered by semver and is kept out of the count of the public surface.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { API_MEANINGS } from "../../scripts/api-meanings.js";
import {
  INTERNAL_ENTRY_POINT,
  INTERNAL_NOTE,
  entryPoints,
  isRuntimeExport,
  publicExports,
  type PublicExport,
} from "../../scripts/api-surface.js";

/**
 * The most values (functions, classes, constants) all entry points outside
 * `verbatim-llm/internal` may export together, both packages counted. A name a user of no layer
 * calls goes to `verbatim-llm/internal` (if the server package needs it) or stays unexported.
 */
const MAX_PUBLIC_VALUES = 120;

/** Internals that once were exported; reachable inside the repository by their own files only. */
const INTERNALS = [
  "appendChain",
  "AppendPlan",
  "AppendOutcome",
  "PreparedMessage",
  "exactlyOneOfKeys",
  "cachedBlock",
  "queryTemplate",
  "QueryTemplate",
  "selectRowArrays",
  "listenForChanges",
  "API_KEY_CHANGES_CHANNEL",
  "storeMigrations",
  "capabilitiesOf",
  "inTransaction",
  "canonicalJsonFragment",
  "CanonicalFragment",
  "formatJsonPath",
  "BASE64_PATTERN",
  "CLI_TRANSCRIPT_LIMIT",
  "toolDefinition",
  "runCliProcess",
  "INVALID_ARGUMENTS_KEY",
  "webSearchText",
  "SECOND_BREAKPOINT_THRESHOLD",
  "ROLE_OF_TYPE",
  "groupRowsByTurn",
  "TYPE_OF_ROLE",
];

const root = fileURLToPath(new URL("../../", import.meta.url));
const exports: readonly PublicExport[] = publicExports();
const publicOnes = exports.filter((item) => item.entryPoint !== INTERNAL_ENTRY_POINT);
const apiMarkdown = readFileSync(join(root, "docs/api.md"), "utf8");

/** docs/api.md's rows, `entry point#name` → meaning, read from each entry point's table. */
function documentedMeanings(markdown: string): Map<string, string> {
  const rows = new Map<string, string>();
  let entryPoint: string | undefined;
  for (const line of markdown.split("\n")) {
    const heading = /^## `([^`]+)`$/.exec(line);
    if (heading !== null) entryPoint = heading[1];
    const row = /^\| `([^`]+)` \| [a-z]+ \| (.*) \|$/.exec(line);
    if (row !== null && entryPoint !== undefined) {
      rows.set(`${entryPoint}#${row[1]}`, (row[2] as string).trim());
    }
  }
  return rows;
}

/** The text of docs/api.md under one entry point's heading, up to the next heading. */
function section(markdown: string, entryPoint: string): string {
  const start = markdown.indexOf(`## \`${entryPoint}\``);
  if (start < 0) return "";
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The files a module loads when it runs: relative imports, `import type` left out. */
function loadedFiles(entry: string): string[] {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const loads =
        (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly !== true) ||
        (ts.isExportDeclaration(statement) && !statement.isTypeOnly);
      const specifier = (statement as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier;
      if (!loads || specifier === undefined || !ts.isStringLiteral(specifier)) continue;
      if (!specifier.text.startsWith(".") || !specifier.text.endsWith(".js")) continue;
      pending.push(resolve(dirname(file), specifier.text.replace(/\.js$/, ".ts")));
    }
  }
  return [...seen].map((file) => file.slice(root.length));
}

/** Every .ts file under a folder of the repository. */
function typeScriptFiles(folder: string, found: string[] = []): string[] {
  for (const name of readdirSync(join(root, folder))) {
    const path = join(folder, name);
    if (name === "node_modules" || name === "dist") continue;
    if (statSync(join(root, path)).isDirectory()) typeScriptFiles(path, found);
    else if (/\.(ts|tsx|vue)$/.test(name)) found.push(path);
  }
  return found;
}

describe("the public API (issue 16)", () => {
  it("every entry point of package.json exports something", () => {
    for (const entryPoint of entryPoints().keys()) {
      expect(exports.filter((item) => item.entryPoint === entryPoint).length).toBeGreaterThan(0);
    }
  });

  it("one name, one meaning: no name is exported by two entry points", () => {
    const byName = new Map<string, string[]>();
    for (const item of exports) {
      byName.set(item.name, [...(byName.get(item.name) ?? []), item.entryPoint]);
    }
    const collisions = [...byName].filter(([, entries]) => entries.length > 1);
    expect(collisions).toEqual([]);
  });

  it("internals are not exported by any entry point", () => {
    const exported = new Set(exports.map((item) => item.name));
    expect(INTERNALS.filter((name) => exported.has(name))).toEqual([]);
    expect(exports.filter((item) => item.internal).map((item) => item.declaredAt)).toEqual([]);
  });

  it("every export has a one-line meaning, and every written meaning names an export", () => {
    expect(exports.filter((item) => item.meaning === undefined).map((item) => item.name)).toEqual(
      [],
    );
    const keys = new Set(exports.map((item) => `${item.entryPoint}#${item.name}`));
    expect(Object.keys(API_MEANINGS).filter((key) => !keys.has(key))).toEqual([]);
  });

  it("at run time each entry point exports exactly the values the compiler lists", async () => {
    for (const [entryPoint, file] of entryPoints()) {
      const loaded = (await import(/* @vite-ignore */ file)) as Record<string, unknown>;
      const values = exports
        .filter((item) => item.entryPoint === entryPoint)
        .filter(isRuntimeExport)
        .map((item) => item.name);
      expect(Object.keys(loaded).sort(), entryPoint).toEqual(values.sort());
    }
  });
});

describe("a deliberate public surface (issue 32)", () => {
  it(`outside ${INTERNAL_ENTRY_POINT}, the entry points export at most ${MAX_PUBLIC_VALUES} values`, () => {
    const values = publicOnes.filter(isRuntimeExport);
    expect(
      values.length,
      "move names a user does not call to verbatim-llm/internal",
    ).toBeLessThanOrEqual(MAX_PUBLIC_VALUES);
  });

  it("every public export has its meaning on its line of docs/api.md", () => {
    const documented = documentedMeanings(apiMarkdown);
    const missing = publicOnes
      .map((item) => `${item.entryPoint}#${item.name}`)
      .filter((key) => (documented.get(key) ?? "").length < 2);
    expect(missing).toEqual([]);
  });

  it(`${INTERNAL_ENTRY_POINT} is an entry point like the others, listed as not covered by semver`, () => {
    const manifest = JSON.parse(
      readFileSync(join(root, "packages/library/package.json"), "utf8"),
    ) as { exports: Record<string, unknown> };
    expect(manifest.exports["./internal"]).toEqual({
      "verbatim-source": "./src/internal/index.ts",
      types: "./dist/internal/index.d.ts",
      default: "./dist/internal/index.js",
    });
    expect(entryPoints().has(INTERNAL_ENTRY_POINT)).toBe(true);
    const documented = section(apiMarkdown, INTERNAL_ENTRY_POINT);
    expect(documented).toContain(INTERNAL_NOTE);
    expect(documented).toMatch(/not covered by semver/);
    const source = readFileSync(join(root, "packages/library/src/internal/index.ts"), "utf8");
    expect(source).toMatch(/^\/\*\*\n \* verbatim-llm\/internal: for verbatim-llm-server only\./);
    expect(source.replace(/\s+\* /g, " ")).toMatch(/not covered by semver/i);
  });

  it(`only the server package (and tests, benches) imports ${INTERNAL_ENTRY_POINT}`, () => {
    const importers = [
      ...typeScriptFiles("packages/library/src"),
      ...typeScriptFiles("examples"),
      ...typeScriptFiles("web"),
    ].filter((file) => {
      if (file.startsWith("packages/library/src/internal/")) return false;
      const text = readFileSync(join(root, file), "utf8");
      return text.includes(`"${INTERNAL_ENTRY_POINT}"`) || /\/internal\/index\.js"/.test(text);
    });
    expect(importers).toEqual([]);
  });

  it(`${INTERNAL_ENTRY_POINT} loads no importer, CLI agent, HTTP transport, archive or conversation`, () => {
    // Every thread of the server loads it (the console's page builders, the import's writer), so
    // what it re-exports must be cheap to load: those modules come with the public entry points.
    const heavy =
      /^packages\/library\/src\/(format|conversation|cli-agents)\/|^packages\/library\/src\/archive\/(?!layout\.ts)|^packages\/library\/src\/providers\/(transport|http-client|render|parse)|^packages\/library\/src\/interop\/(claude-code|codex)\/|^packages\/library\/src\/interop\/trajectories\/(swe-agent|openhands|inspect|rows-import)|^packages\/library\/src\/cli\/(main|commands\/)/;
    const file = entryPoints().get(INTERNAL_ENTRY_POINT) as string;
    expect(loadedFiles(file).filter((path) => heavy.test(path))).toEqual([]);
  });
});
