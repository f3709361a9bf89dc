import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../packages/server/src/server/openapi.js";

describe("docs/openapi.json and docs/server/", () => {
  it("B14 document every route, with a schema for every body, query and reply", async () => {
    const document = (await openApiDocument()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, unknown>; parameters?: unknown[] }>
      >;
    };
    // The server's documentation is a folder of pages (docs/server/*.md): every path must be
    // named in one of them.
    const folder = new URL("../../docs/server/", import.meta.url);
    const pages = readdirSync(folder).filter((name) => name.endsWith(".md"));
    expect(pages).toEqual(expect.arrayContaining(["README.md", "responses.md", "console.md"]));
    const serverMd = pages.map((name) => readFileSync(new URL(name, folder), "utf8")).join("\n");
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
      expect(serverMd, `docs/server/*.md name ${path}`).toContain(
        path.replace(/\{(\w+)\}/g, ":$1"),
      );
      for (const operation of Object.values(document.paths[path] ?? {})) {
        expect(Object.keys(operation.responses)).toContain("200");
      }
    }
  });
});
