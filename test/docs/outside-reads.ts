import { isAbsolute, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

/**
 * Names that point at the project's specification outside the repository: the folder beside
 * the checkout and the files it holds. A test that needs their words reads a copy under
 * test/fixtures instead (test/fixtures/seeds/SOURCES.md).
 */
const outsideNames = [
  /(^|[/\\])shared[/\\]/,
  /\bSPEC\.md\b/,
  /\bARCHITECTURE\.md\b/,
  /000_7b05b146ee153505/,
  /003_5f3d5f1eaa9ac5e2/,
];

/** One place where a source file reaches outside the repository. */
export interface OutsideRead {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly reason: string;
}

/** The fixed text of a string or template literal (a template's literal parts joined). */
function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    return [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join("");
  }
  return undefined;
}

/** True for `import.meta.url`. */
function isImportMetaUrl(node: ts.Node | undefined): boolean {
  return (
    node !== undefined &&
    ts.isPropertyAccessExpression(node) &&
    ts.isMetaProperty(node.expression) &&
    node.expression.keywordToken === ts.SyntaxKind.ImportKeyword &&
    node.name.text === "url"
  );
}

/**
 * The places in one TypeScript source that reach outside `root`: a `new URL(path,
 * import.meta.url)` that resolves above it, or a path (a string without spaces) naming the
 * specification's files beside the checkout. `file` is the source's path relative to `root`.
 */
export function outsideReads(root: string, file: string, source: string): OutsideRead[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const here = pathToFileURL(`${root}/${file}`);
  const found: OutsideRead[] = [];
  const report = (node: ts.Node, text: string, reason: string): void => {
    const line = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1;
    found.push({ file, line, text, reason });
  };
  const visit = (node: ts.Node): void => {
    const text = literalText(node);
    const pathLike = text !== undefined && !/\s/.test(text);
    if (pathLike && outsideNames.some((pattern) => pattern.test(text))) {
      report(node, text, "names the specification beside the checkout");
    }
    if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "URL"
    ) {
      const [target, base] = node.arguments ?? [];
      const path = target === undefined ? undefined : literalText(target);
      if (path !== undefined && isImportMetaUrl(base)) {
        const resolved = fileURLToPath(new URL(path, here));
        const inside = relative(root, resolved);
        if (inside.startsWith("..") || isAbsolute(inside)) {
          report(node, path, `resolves to ${resolved}, outside the repository`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}
