import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  parseRequirementsDocument,
  requirementIdsInOrder,
  requirementsProblems,
  unknownIds,
  type RepositoryView,
} from "./requirements-check.js";
import { filesUnder, requirementIdsInTitles, testFilesUnder } from "./test-titles.js";

// The links of docs/requirements.md are the source of truth: they are resolved relative to
// docs/, so moving code (say src/ into packages/*/src) needs the links updated and nothing here.
const root = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const documentFolder = join(root, "docs");
const markdown = readFileSync(join(documentFolder, "requirements.md"), "utf8");

function repositoryView(): RepositoryView {
  const citedInTests = new Map(
    testFilesUnder(root).map((file) => [file, requirementIdsInTitles(join(root, file))] as const),
  );
  return { root, documentFolder, idsInTitles: requirementIdsInTitles, citedInTests };
}

describe("docs/requirements.md", () => {
  it("every requirement has a section with prose, code and tests; every link and test title agrees", () => {
    expect(requirementsProblems(parseRequirementsDocument(markdown), repositoryView())).toEqual([]);
  });

  it("names every requirement of parts A and B once, in order", () => {
    const ids = parseRequirementsDocument(markdown).sections.map((section) => section.id);
    expect(ids).toEqual(requirementIdsInOrder());
    expect(ids).toHaveLength(43);
  });

  it("every ID cited in code, tests and documents has a section", () => {
    const sources = filesUnder(root, (name) => /\.(ts|md)$/.test(name)).filter(
      (file) => !file.startsWith("test/fixtures/"),
    );
    const unknown = sources.flatMap((file) =>
      unknownIds(readFileSync(join(root, file), "utf8")).map((id) => `${file}: ${id}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe("the requirements check finds what is wrong", () => {
  const view = (cited: Record<string, string[]>): RepositoryView => ({
    root,
    documentFolder,
    idsInTitles: requirementIdsInTitles,
    citedInTests: new Map(Object.entries(cited)),
  });
  const honest = parseRequirementsDocument(markdown);

  it("a missing section, a doubled one, and one out of order", () => {
    const sections = honest.sections.filter((section) => section.id !== "A7");
    const doubled = [...sections, sections[0]!];
    const problems = requirementsProblems({ ...honest, sections: doubled }, view({}));
    expect(problems).toContain('A7 has no section ("### A7 <name>")');
    expect(problems).toContain("A1 has 2 sections; keep one");
    expect(problems.some((problem) => problem.startsWith("sections are out of order"))).toBe(true);
  });

  it("a link to a file that does not exist, or outside the repository", () => {
    const [first, ...rest] = honest.sections;
    const broken = {
      ...first!,
      links: [
        ...first!.links,
        { target: "../src/archive/nowhere.ts", line: 1 },
        { target: "../../elsewhere/notes.md", line: 2 },
      ],
    };
    const problems = requirementsProblems({ ...honest, sections: [broken, ...rest] }, view({}));
    expect(problems).toEqual([
      "line 1: ../src/archive/nowhere.ts does not exist (moved or renamed? update the link)",
      "line 2: ../../elsewhere/notes.md points outside the repository",
    ]);
  });

  it("a linked test file whose titles do not name the ID, and a section without code", () => {
    const sections = honest.sections.map((section) =>
      section.id === "B15"
        ? { ...section, links: [{ target: "../test/docs/requirements.test.ts", line: 9 }] }
        : section,
    );
    expect(requirementsProblems({ ...honest, sections }, view({}))).toEqual([
      "B15 links no code",
      "B15 links test/docs/requirements.test.ts, whose test titles do not name B15",
    ]);
  });

  it("a heading that is not a requirement, and a section with no prose and no links", () => {
    const stray = { id: "Overview", line: 3, prose: "", links: [] };
    const problems = requirementsProblems(
      { ...honest, sections: [...honest.sections, stray] },
      view({}),
    );
    expect(problems).toEqual([
      'line 3: "### Overview" is not a requirement ID (A1–A27, A10a, B1–B15)',
      "Overview says nothing about what it asks",
      "Overview links no test file",
      "Overview links no code",
    ]);
  });

  // Built, not written out, so that this file cites no ID beyond the list itself.
  const pastArchive = `A${27 + 1}`;
  const pastServer = `B${15 + 1}`;

  it("an ID named in a test title that the document does not have", () => {
    const problems = requirementsProblems(honest, view({ "src/a.test.ts": [pastArchive] }));
    expect(problems).toEqual([
      `src/a.test.ts names ${pastArchive} in a test title, but docs/requirements.md has no ${pastArchive} section`,
    ]);
  });

  it("an ID beyond the list, cited anywhere", () => {
    expect(unknownIds(`see ${pastServer} and A10a`)).toEqual([pastServer]);
  });
});
