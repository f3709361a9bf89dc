import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** Folders never searched for tests: dependencies, build output, version control, run data. */
const skippedFolders = new Set(["node_modules", "dist", ".git", ".verbatim", ".verbatim-test"]);

/** Every file under `root` whose name passes `wanted`, relative to it with forward slashes, sorted. */
export function filesUnder(root: string, wanted: (name: string) => boolean): string[] {
  const found: string[] = [];
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!skippedFolders.has(entry.name)) visit(join(folder, entry.name));
      } else if (entry.isFile() && wanted(entry.name)) {
        found.push(relative(root, join(folder, entry.name)).split("\\").join("/"));
      }
    }
  };
  visit(root);
  return found.sort();
}

/** Every `*.test.ts` file under `root`. */
export function testFilesUnder(root: string): string[] {
  return filesUnder(root, (name) => name.endsWith(".test.ts"));
}

/** The functions whose first argument is a test or suite title. */
const titledCalls = new Set(["it", "test", "describe", "suite", "describeEachDialect"]);

/** The name a call chain starts from: `it` for `it(…)`, `it.skipIf(…)(…)` and `it.each(…)(…)`. */
function rootName(callee: ts.Expression): string | undefined {
  let current: ts.Expression = callee;
  for (;;) {
    if (ts.isIdentifier(current)) return current.text;
    if (ts.isCallExpression(current) || ts.isPropertyAccessExpression(current)) {
      current = current.expression;
    } else {
      return undefined;
    }
  }
}

/** The fixed text of a title: a string, or a template's literal parts joined by a space. */
function titleText(argument: ts.Expression | undefined): string | undefined {
  if (argument === undefined) return undefined;
  if (ts.isStringLiteral(argument) || ts.isNoSubstitutionTemplateLiteral(argument)) {
    return argument.text;
  }
  if (ts.isTemplateExpression(argument)) {
    return [argument.head.text, ...argument.templateSpans.map((span) => span.literal.text)].join(
      " ",
    );
  }
  return undefined;
}

/** The titles of every test and suite in a TypeScript source, in source order. */
export function testTitles(source: string, fileName = "test.ts"): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const titles: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const name = rootName(node.expression);
      const title =
        name !== undefined && titledCalls.has(name) ? titleText(node.arguments[0]) : undefined;
      if (title !== undefined) titles.push(title);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return titles;
}

/** A requirement ID as tests and documents write it: A1–A27 (and A10a), B1–B15, or beyond. */
const requirementPattern = /\b([AB][1-9][0-9]?a?)\b/g;

/** The requirement IDs named in a piece of text, each once, in order of first mention. */
export function requirementIds(text: string): string[] {
  return [...new Set([...text.matchAll(requirementPattern)].map((match) => match[1] as string))];
}

const idsByPath = new Map<string, string[]>();

/** The requirement IDs named in the test titles of one file (read and parsed once per run). */
export function requirementIdsInTitles(path: string): string[] {
  let ids = idsByPath.get(path);
  if (ids === undefined) {
    ids = requirementIds(testTitles(readFileSync(path, "utf8"), path).join("\n"));
    idsByPath.set(path, ids);
  }
  return ids;
}
