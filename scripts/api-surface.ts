// The public API of verbatim as its entry points (package.json "exports") declare it: every
// exported name with its kind and one-line meaning, read with the TypeScript compiler. It
// makes docs/api.md (scripts/generated-documents.ts) and is what test/api/public-api.test.ts
// holds to its rules.
import { readFileSync } from "node:fs";
import ts from "typescript";
import { API_MEANINGS } from "./api-meanings.js";

export type ExportKind = "function" | "class" | "constant" | "type" | "interface";

export interface PublicExport {
  /** The entry point, as users import it: `verbatim-llm/archive`. */
  readonly entryPoint: string;
  readonly name: string;
  readonly kind: ExportKind;
  /** One line: from API_MEANINGS, else the first sentence of the declaration's doc comment. */
  readonly meaning: string | undefined;
  /** Where the exported symbol is declared (`src/archive/archive.ts#openArchive`). */
  readonly declaredAt: string;
  /** True when the declaration is tagged `@internal` (then no entry point may export it). */
  readonly internal: boolean;
}

const root = new URL("../", import.meta.url);

/**
 * The entry point of what only verbatim-llm-server needs: not covered by semver, may change in any
 * release. Every other entry point is the public API (test/api/public-api.test.ts bounds its size).
 */
export const INTERNAL_ENTRY_POINT = "verbatim-llm/internal";

/** What docs/api.md says of INTERNAL_ENTRY_POINT, under its heading. */
export const INTERNAL_NOTE =
  "For verbatim-llm-server only: **not covered by semver**, it may change in any release (a patch release included). An application imports the other entry points; these names are listed so that the server's imports can be read.";

/** True for a value (what a module holds at run time), false for a type or an interface. */
export function isRuntimeExport(item: PublicExport): boolean {
  return item.kind !== "type" && item.kind !== "interface";
}

/** The published packages of this repository (npm workspaces), in the order docs/api.md lists them. */
const PACKAGES = ["packages/library/", "packages/server/"] as const;

/** The entry points of the packages' "exports": `package/subpath` → source file. */
export function entryPoints(): ReadonlyMap<string, string> {
  const entries = new Map<string, string>();
  for (const folder of PACKAGES) {
    const packageRoot = new URL(folder, root);
    const manifest = JSON.parse(readFileSync(new URL("package.json", packageRoot), "utf8")) as {
      readonly name: string;
      readonly exports: Record<string, string | Record<string, string>>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      const source =
        typeof target === "string"
          ? target
          : Object.values(target).find((path) => path.endsWith(".ts"));
      if (source === undefined || !source.endsWith(".ts")) continue;
      entries.set(`${manifest.name}${subpath.slice(1)}`, new URL(source, packageRoot).pathname);
    }
  }
  return entries;
}

function kindOf(declaration: ts.Declaration): ExportKind {
  if (ts.isFunctionDeclaration(declaration)) return "function";
  if (ts.isClassDeclaration(declaration)) return "class";
  if (ts.isInterfaceDeclaration(declaration)) return "interface";
  if (ts.isTypeAliasDeclaration(declaration)) return "type";
  if (ts.isVariableDeclaration(declaration)) return "constant";
  throw new Error(`unexpected kind of export: ${ts.SyntaxKind[declaration.kind]}`);
}

/** Where the first sentence of `line` ends among `stops` (a stop inside brackets does not count). */
function sentenceEnd(line: string, stops: string): number | undefined {
  let depth = 0;
  for (let index = 0; index < line.length; index++) {
    const character = line[index] as string;
    if (character === "(" || character === "[") depth += 1;
    else if (character === ")" || character === "]") depth = Math.max(0, depth - 1);
    else if (depth === 0 && stops.includes(character) && (line[index + 1] ?? " ") === " ") {
      if (/\b(e\.g|i\.e)$/.test(line.slice(0, index))) continue;
      return index;
    }
  }
  return undefined;
}

/** The longest meaning kept whole; a longer first sentence is cut at its first colon. */
const MEANING_LENGTH = 160;

/** The first sentence of a doc comment, on one line. */
function firstSentence(text: string): string | undefined {
  const line = text.replace(/\s+/g, " ").trim();
  if (line === "") return undefined;
  let sentence = line.slice(0, sentenceEnd(line, ".") ?? line.length).replace(/\.$/, "");
  if (sentence.length > MEANING_LENGTH) {
    sentence = sentence.slice(0, sentenceEnd(sentence, ":;") ?? sentence.length);
  }
  return `${sentence}.`;
}

/** Every export of every entry point, in the order each index.ts lists them. */
export function publicExports(): PublicExport[] {
  const entries = entryPoints();
  const program = ts.createProgram([...entries.values()], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    resolveJsonModule: true,
  });
  const checker = program.getTypeChecker();
  const rootPath = root.pathname;
  const result: PublicExport[] = [];
  for (const [entryPoint, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`cannot read the entry point ${file}`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol =
        exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declaration = symbol.declarations?.[0];
      if (declaration === undefined) throw new Error(`${exported.name} has no declaration`);
      const path = declaration.getSourceFile().fileName.slice(rootPath.length);
      const key = `${entryPoint}#${exported.name}`;
      const documented = firstSentence(
        ts.displayPartsToString(symbol.getDocumentationComment(checker)),
      );
      result.push({
        entryPoint,
        name: exported.name,
        kind: kindOf(declaration),
        meaning: API_MEANINGS[key] ?? documented,
        declaredAt: `${path}#${symbol.name}`,
        internal: ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === "internal"),
      });
    }
  }
  return result;
}

/** docs/api.md: one table per entry point. */
export function apiMarkdown(exports: readonly PublicExport[] = publicExports()): string {
  const values = exports.filter(
    (item) => item.entryPoint !== INTERNAL_ENTRY_POINT && isRuntimeExport(item),
  ).length;
  const lines = [
    "# Public API",
    "",
    "<!-- Generated from the entry points (packages/*/src/*/index.ts) by `npm run docs:generate`; do not edit by hand. -->",
    "",
    "Each entry point exports what a user of that layer needs and nothing else; everything else",
    "is internal and may change in any release. No name is exported by two entry points, so",
    "imports from several never collide. A meaning is the first sentence of the declaration's doc",
    "comment, or comes from `scripts/api-meanings.ts` where that says it better. Errors of every entry",
    "point are `VerbatimError`s (`verbatim-llm/core`); `isVerbatimError` recognises them across",
    "duplicate installs. Error codes are listed in [errors.md](errors.md).",
    "",
    `\`${INTERNAL_ENTRY_POINT}\` is for verbatim-llm-server only and **not covered by semver**: it`,
    "holds what the server package needs of the library and a user of a layer does not call, and",
    "may change in any release. Outside it, both packages export",
    `${values} values (functions, classes, constants) and their types.`,
    "",
  ];
  let current: string | undefined;
  for (const item of exports) {
    if (item.entryPoint !== current) {
      current = item.entryPoint;
      lines.push(`## \`${current}\``, "");
      if (current === INTERNAL_ENTRY_POINT) lines.push(INTERNAL_NOTE, "");
      lines.push("| name | kind | meaning |", "| --- | --- | --- |");
    }
    const meaning = (item.meaning ?? "").replaceAll("|", "\\|");
    lines.push(`| \`${item.name}\` | ${item.kind} | ${meaning} |`);
    const next = exports[exports.indexOf(item) + 1];
    if (next === undefined || next.entryPoint !== current) lines.push("");
  }
  return lines.join("\n");
}
