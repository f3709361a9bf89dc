import { errorCodeGroups } from "../packages/library/src/core/error-codes.js";
import { openApiJson } from "../packages/server/src/server/openapi.js";
import type { ErrorCodeDefinition } from "../packages/library/src/core/codes/define.js";
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
    "<!-- Generated from packages/library/src/core/codes/*.ts by `npm run docs:generate`; do not edit by hand. -->",
    "",
    "Every error verbatim raises is a `VerbatimError` with a stable `code`. Its message says what",
    "went wrong, `where` says where (a path, a JSON path, a field) and `hint` says what to do. The",
    'HTTP server answers every error in one shape, `{"error": {"code", "message", "where", "hint"}}`,',
    "with the status below. The CLI prints `verbatim <command>: <message> (at <where>). <hint>` on",
    "stderr and exits 2 for `usage_error` and `path_not_found`, 1 for every other code.",
    "",
  ];
  for (const [group, codes] of Object.entries(errorCodeGroups)) {
    const definitions = codes as readonly ErrorCodeDefinition[];
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
