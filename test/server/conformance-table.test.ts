/**
 * The conformance tables of docs/server/ (responses.md: every field; conversations.md: every
 * route) cannot drift from the server and its tests (issue 17): the field table names exactly
 * the fields of the request schema and of the every-field test's table
 * (request-fields-table.ts), each row is marked supported / mapped / refused / partly
 * refused, and a plain field row's mark matches what the every-field test checks at the four
 * wire formats; the route table has a row for every route the server serves under
 * /v1/responses, /v1/conversations and /v1/models (docs/openapi.json, itself checked against
 * the server), each marked supported / mapped / refused, each naming tests that exist.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createResponseBodySchema } from "../../packages/server/src/gateway/responses/schemas.js";
import { TABLE } from "./request-fields-table.js";

const responsesMd = readFileSync(
  new URL("../../docs/server/responses.md", import.meta.url),
  "utf8",
);
const conversationsMd = readFileSync(
  new URL("../../docs/server/conversations.md", import.meta.url),
  "utf8",
);
const openapi = JSON.parse(
  readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"),
) as { paths: Record<string, Record<string, unknown>> };

/** The rows (cells) of the first table under a heading of a page of docs/server/. */
function tableUnder(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const rest = markdown.slice(start + heading.length);
  const end = rest.search(/\n#{2,3} /);
  const lines = (end < 0 ? rest : rest.slice(0, end)).split("\n");
  const rows = lines.filter((line) => line.startsWith("| ")).slice(2);
  expect(rows.length, heading).toBeGreaterThan(0);
  return rows.map((line) =>
    line
      .slice(2, -2)
      .split(" | ")
      .map((cell) => cell.trim()),
  );
}

const fieldRows = tableUnder(
  responsesMd,
  "## Conformance: every field of `POST /v1/responses`\n",
).map(([first = "", kind = ""]) => {
  const named = /^`([a-z_]+)(?:\.[a-z_.]+)?`/.exec(first)?.[1];
  return { cell: first, field: named ?? "", kind, plain: /^`[a-z_]+`$/.test(first) };
});

describe("docs/server/responses.md: every field of POST /v1/responses", () => {
  it("names exactly the request schema's fields, which are exactly the every-field test's rows", () => {
    const named = [...new Set(fieldRows.map((row) => row.field))].sort();
    expect(named).toEqual(Object.keys(createResponseBodySchema.shape).sort());
    expect(named).toEqual(Object.keys(TABLE).sort());
  });

  it("marks each row supported, mapped, refused or partly refused", () => {
    for (const row of fieldRows) {
      expect(["supported", "mapped", "refused", "partly refused"], row.cell).toContain(row.kind);
    }
  });

  it("marks a field refused where the every-field test finds it refused, and only there", () => {
    for (const row of fieldRows.filter((candidate) => candidate.plain)) {
      const outcomes = Object.values(TABLE[row.field]?.outcome ?? {});
      const refusedAt = outcomes.filter((outcome) => "refused" in outcome).length;
      const expected =
        refusedAt === 0
          ? ["supported", "mapped"]
          : refusedAt === outcomes.length
            ? ["refused"]
            : ["partly refused"];
      expect(expected, `${row.cell} is marked ${row.kind}`).toContain(row.kind);
    }
  });
});

describe("docs/server/conversations.md: every route of the Responses, Conversations and Models APIs", () => {
  const rows = tableUnder(
    conversationsMd,
    "## Conformance: every route of the Responses, Conversations and Models APIs\n",
  );
  const routes = rows.map(([route = "", here = "", tests = ""]) => ({
    // A row may name several routes (GET /v1/models and GET /v1/models/:model).
    routes: [...route.matchAll(/`([A-Z]+ \/[^`?]+)/g)].map((match) => match[1] ?? ""),
    cell: route,
    here,
    tests: tests.split(",").map((name) => name.trim()),
  }));

  it("has a row for every route the server serves there", () => {
    const served = Object.entries(openapi.paths)
      .filter(([path]) => /^\/v1\/(responses|conversations|models)(\/|$)/.test(path))
      .flatMap(([path, methods]) =>
        Object.keys(methods).map(
          (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`,
        ),
      );
    expect(served.length).toBeGreaterThan(10);
    const documented = new Set(routes.flatMap((row) => row.routes));
    for (const route of served) expect([...documented], route).toContain(route);
  });

  it("marks each route supported, mapped or refused and names tests that exist", () => {
    for (const row of routes) {
      expect(row.routes.length, row.cell).toBeGreaterThan(0);
      expect(row.here, row.cell).toMatch(/^(supported|mapped|refused)\b/);
      for (const name of row.tests) {
        expect(
          existsSync(new URL(`./${name}.test.ts`, import.meta.url)),
          `${row.cell}: ${name}`,
        ).toBe(true);
      }
    }
  });
});
