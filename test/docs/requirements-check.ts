import { existsSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { requirementIds } from "./test-titles.js";

/** Every requirement ID, in document order: A1–A27 (A10a after A10), then B1–B15. */
export function requirementIdsInOrder(): string[] {
  const archive = Array.from({ length: 27 }, (_, index) => `A${index + 1}`);
  archive.splice(archive.indexOf("A10") + 1, 0, "A10a");
  const server = Array.from({ length: 15 }, (_, index) => `B${index + 1}`);
  return [...archive, ...server];
}

/** A relative link of the document: its target as written and the line it is on. */
export interface DocumentLink {
  readonly target: string;
  readonly line: number;
}

/** One `### <ID> <name>` section: its ID, its line, its prose and its links. */
export interface RequirementSection {
  readonly id: string;
  readonly line: number;
  readonly prose: string;
  readonly links: readonly DocumentLink[];
}

/** The document cut into its requirement sections, and the links outside them. */
export interface RequirementsDocument {
  readonly sections: readonly RequirementSection[];
  readonly otherLinks: readonly DocumentLink[];
}

const linkPattern = /\[[^\]]*\]\(([^)\s]+)\)/g;
const sectionHeading = /^### (\S+)/;

/** Reads the sections (`### A16 …`) and the relative links of the requirements document. */
export function parseRequirementsDocument(markdown: string): RequirementsDocument {
  const sections: { id: string; line: number; prose: string[]; links: DocumentLink[] }[] = [];
  const otherLinks: DocumentLink[] = [];
  markdown.split("\n").forEach((text, index) => {
    const line = index + 1;
    const heading = sectionHeading.exec(text);
    if (heading !== null) {
      sections.push({ id: heading[1] as string, line, prose: [], links: [] });
      return;
    }
    if (/^#{1,2} /.test(text)) {
      sections.push({ id: "", line, prose: [], links: [] });
      return;
    }
    const current = sections.at(-1);
    const links = [...text.matchAll(linkPattern)]
      .map((match) => match[1] as string)
      .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith("#"))
      .map((target) => ({ target, line }));
    if (current === undefined || current.id === "") {
      otherLinks.push(...links);
    } else {
      current.links.push(...links);
      if (links.length === 0 && text.trim() !== "") current.prose.push(text.trim());
    }
  });
  return {
    sections: sections
      .filter((section) => section.id !== "")
      .map((section) => ({ ...section, prose: section.prose.join(" ") })),
    otherLinks,
  };
}

/** What the checks need to know about the repository. */
export interface RepositoryView {
  /** The repository's root folder. */
  readonly root: string;
  /** The folder the document sits in; its links are relative to it. */
  readonly documentFolder: string;
  /** The requirement IDs named in the test titles of a file (absolute path). */
  readonly idsInTitles: (path: string) => readonly string[];
  /** Every test file of the repository (relative to root) with the IDs its titles name. */
  readonly citedInTests: ReadonlyMap<string, readonly string[]>;
}

/** The file a link points at, without its `#fragment`, as an absolute path. */
export function linkedPath(view: RepositoryView, link: DocumentLink): string {
  return resolve(view.documentFolder, decodeURIComponent(link.target.split("#")[0] as string));
}

const isTestFile = (path: string): boolean => /\.test\.[cm]?[jt]sx?$/.test(path);

/**
 * Every way the document fails to describe the repository, one sentence each (empty when it
 * is honest): sections missing, doubled, out of order or unknown; a section without prose, code
 * or tests; a link to a file that does not exist or lies outside the repository; a linked test
 * file whose titles do not name the section's ID; an ID named in a test title with no section.
 */
export function requirementsProblems(
  document: RequirementsDocument,
  view: RepositoryView,
): string[] {
  const problems: string[] = [];
  const expected = requirementIdsInOrder();
  const found = document.sections.map((section) => section.id);
  for (const id of expected) {
    const count = found.filter((other) => other === id).length;
    if (count === 0) problems.push(`${id} has no section ("### ${id} <name>")`);
    if (count > 1) problems.push(`${id} has ${count} sections; keep one`);
  }
  for (const section of document.sections) {
    if (!expected.includes(section.id)) {
      problems.push(
        `line ${section.line}: "### ${section.id}" is not a requirement ID (A1–A27, A10a, B1–B15)`,
      );
    }
  }
  const known = found.filter((id) => expected.includes(id));
  const ordered = expected.filter((id) => known.includes(id));
  if (known.join(" ") !== ordered.join(" ")) {
    problems.push(`sections are out of order: ${known.join(" ")}; expected ${ordered.join(" ")}`);
  }
  const allLinks = [
    ...document.otherLinks,
    ...document.sections.flatMap((section) => section.links),
  ];
  for (const link of allLinks) {
    const path = linkedPath(view, link);
    const inside = relative(view.root, path);
    if (inside.startsWith("..") || isAbsolute(inside)) {
      problems.push(`line ${link.line}: ${link.target} points outside the repository`);
    } else if (!existsSync(path)) {
      problems.push(
        `line ${link.line}: ${link.target} does not exist (moved or renamed? update the link)`,
      );
    }
  }
  for (const section of document.sections) {
    if (section.prose === "") problems.push(`${section.id} says nothing about what it asks`);
    const paths = section.links.map((link) => linkedPath(view, link));
    const tests = paths.filter(isTestFile);
    if (tests.length === 0) problems.push(`${section.id} links no test file`);
    if (paths.length === tests.length) problems.push(`${section.id} links no code`);
    for (const path of tests) {
      if (!existsSync(path) || !statSync(path).isFile()) continue;
      if (!view.idsInTitles(path).includes(section.id)) {
        problems.push(
          `${section.id} links ${relative(view.root, path)}, whose test titles do not name ${section.id}`,
        );
      }
    }
  }
  for (const [file, ids] of view.citedInTests) {
    for (const id of ids) {
      if (!found.includes(id)) {
        problems.push(
          `${file} names ${id} in a test title, but docs/requirements.md has no ${id} section`,
        );
      }
    }
  }
  return problems;
}

/** The IDs cited in a text that the document has no section for. */
export function unknownIds(text: string): string[] {
  const expected = new Set(requirementIdsInOrder());
  return requirementIds(text).filter((id) => !expected.has(id));
}
