import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../packages/server/src/server/openapi.js";

describe("docs/openapi.json and docs/server.md", () => {
  it("B14 document every route, with a schema for every body, query and reply", async () => {
    const document = (await openApiDocument()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, unknown>; parameters?: unknown[] }>
      >;
    };
    const serverMd = readFileSync(new URL("../../docs/server.md", import.meta.url), "utf8");
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        "/ai-gateway/conversations/{id}/messages",
        "/background-agent-jobs/{id}",
        "/v1/responses",
        "/v1/responses/{id}",
        "/v1/responses/{id}/input_items",
        "/v1/responses/{id}/compress",
        "/healthz",
      ]),
    );
    for (const path of paths) {
      expect(serverMd, `docs/server.md names ${path}`).toContain(path.replace(/\{(\w+)\}/g, ":$1"));
      for (const operation of Object.values(document.paths[path] ?? {})) {
        expect(Object.keys(operation.responses)).toContain("200");
      }
    }
  });
});
