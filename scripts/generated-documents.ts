import { errorCodeGroups } from "../packages/library/src/core/error-codes.js";
// The server package's layers register their codes when their modules load (in layer order).
import "../packages/server/src/store/error-codes.js";
import "../packages/server/src/gateway/error-codes.js";
import "../packages/server/src/server/error-codes.js";
import { openApiJson } from "../packages/server/src/server/openapi.js";
import { formatJsonSchema } from "../packages/library/src/format/json-schema.js";
import { apiMarkdown } from "./api-surface.js";

/** A checked-in file generated from code, with a drift test (test/generated-documents.test.ts). */
export interface GeneratedDocument {
  readonly path: string;
  content(): string | Promise<string>;
}

function errorsMarkdown(): string {
  const lines = [
    "# Errors",
    "",
    "<!-- Generated from packages/library/src/core/codes/*.ts and packages/server/src/*/error-codes.ts by `npm run docs:generate`; do not edit by hand. -->",
    "",
    "Every error verbatim raises is a `VerbatimError` with a stable `code`. Its message says what",
    "went wrong, `where` says where (a path, a JSON path, a field) and `hint` says what to do. The",
    'HTTP server answers every error in one shape, `{"error": {"code", "message", "where", "hint"}}`,',
    "with the status below. The CLI prints `verbatim <command>: <message> (at <where>). <hint>` on",
    "stderr and exits 2 for `usage_error` and `path_not_found`, 1 for every other code.",
    "",
    "Each layer owns its codes. The library (`verbatim-llm`) registers the groups of its layers;",
    "the server package (`verbatim-llm-server`) registers `store`, `gateway` and `server` when one",
    "of its entry points is imported, so the library alone knows only its own codes.",
    "",
  ];
  for (const [group, definitions] of errorCodeGroups()) {
    if (definitions.length === 0) continue;
    lines.push(
      `## ${group}`,
      "",
      "| code | HTTP | meaning | what to do |",
      "| --- | --- | --- | --- |",
    );
    for (const definition of definitions) {
      lines.push(
        `| \`${definition.code}\` | ${definition.httpStatus} | ${definition.meaning} | ${definition.remedy} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}

export function generatedDocuments(): GeneratedDocument[] {
  return [
    { path: "docs/errors.md", content: errorsMarkdown },
    {
      path: "docs/format-1.schema.json",
      content: () => JSON.stringify(formatJsonSchema(), null, 2) + "\n",
    },
    { path: "docs/openapi.json", content: openApiJson },
    { path: "docs/api.md", content: () => apiMarkdown() },
  ];
}
