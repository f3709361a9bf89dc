// Issue 16, "each layer owns its error codes", at compile time: `ErrorCode` is the union of the
// groups declared in `ErrorCodeGroups`, and the server package adds its layers to it by
// declaration merging. A program that imports only the library refuses a server code; one that
// imports a server entry point accepts it; an unknown code is refused in both.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
/** The previous program, whose parsed files (the libraries of TypeScript and Node) are reused. */
let previous: ts.Program | undefined;

/** The type errors of one virtual file (in this folder), as `line: message`, compiled alone. */
function typeErrors(source: string): string[] {
  const file = join(root, "test", "api", "error-code-types.virtual.ts");
  const config = ts.readConfigFile(join(root, "tsconfig.json"), (path) => ts.sys.readFile(path));
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (path) => (path === file ? source : readFile(path));
  host.fileExists = (path) => path === file || fileExists(path);
  host.getSourceFile = (path, language, ...rest) =>
    path === file
      ? ts.createSourceFile(path, source, language)
      : getSourceFile(path, language, ...rest);
  const program = ts.createProgram([file], { ...options, noEmit: true }, host, previous);
  previous = program;
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where =
      diagnostic.file === undefined || diagnostic.start === undefined
        ? "?"
        : `${diagnostic.file.fileName === file ? "" : `${diagnostic.file.fileName}:`}${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}`;
    return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`;
  });
}

describe("ErrorCode at compile time (issue 16)", () => {
  it("with the library alone: its own codes compile, a server code and an unknown code do not", () => {
    const errors = typeErrors(
      [
        `import { VerbatimError, httpStatusOf } from "verbatim-llm/core";`,
        `new VerbatimError("usage_error", "a library code");`,
        `new VerbatimError("store_unreachable", "a server code");`,
        `httpStatusOf("no_such_code");`,
      ].join("\n"),
    );
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^3: Argument of type '"store_unreachable"' is not assignable/);
    expect(errors[1]).toMatch(/^4: Argument of type '"no_such_code"' is not assignable/);
  }, 120_000);

  it("with a server entry point imported: the server's codes compile, an unknown code does not", () => {
    const errors = typeErrors(
      [
        `import { VerbatimError } from "verbatim-llm/core";`,
        `import { registerErrorCodes } from "verbatim-llm/internal";`,
        `import "verbatim-llm-server/store";`,
        `new VerbatimError("usage_error", "a library code");`,
        `new VerbatimError("store_unreachable", "a store code");`,
        `new VerbatimError("no_such_code", "an unknown code");`,
        `registerErrorCodes("no_such_layer", []);`,
      ].join("\n"),
    );
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^6: Argument of type '"no_such_code"' is not assignable/);
    expect(errors[1]).toMatch(/^7: Argument of type '"no_such_layer"' is not assignable/);
  }, 120_000);
});
