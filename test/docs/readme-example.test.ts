import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

// The README's library example must run as written. It runs unchanged when `verbatim-llm`
// resolves in this checkout (the workspace link in node_modules; bin/run-ts.js and tsconfig.json
// pick the sources through the "verbatim-source" condition). Without that link, each
// `verbatim-llm/<entry>` is mapped to the entry's source file, wherever the library's sources
// are (packages/library/src, or src before the layout change).

const root = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const readme = readFileSync(join(root, "README.md"), "utf8");
const marker = "<!-- readme-example";
const run = promisify(execFile);
const scratchFolders: string[] = [];

afterAll(async () => {
  await Promise.all(scratchFolders.map((folder) => rm(folder, { recursive: true, force: true })));
});

/** The first ```ts block after the marker comment, or an error saying what is missing. */
function readmeExample(markdown: string): string {
  const at = markdown.indexOf(marker);
  if (at < 0) {
    throw new Error(`README.md has no "${marker} …-->" comment before its library example`);
  }
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(markdown.slice(at));
  if (block?.[1] === undefined) {
    throw new Error(`README.md has no \`\`\`ts block after "${marker}"`);
  }
  return block[1];
}

/**
 * What the example says it prints: the comment after each `console.log(…);`, one line each.
 * A comment ending in "…" gives the start of the line.
 */
function promisedLines(source: string): { text: string; isPrefix: boolean }[] {
  return [...source.matchAll(/^\s*console\.log\(.*\);\s*\/\/ (.+)$/gm)].map((match) => {
    const text = match[1]!.trimEnd();
    return text.endsWith("…")
      ? { text: text.slice(0, -1), isPrefix: true }
      : { text, isPrefix: false };
  });
}

/** True when `verbatim-llm/<entry>` resolves from inside the repository as it would for a user. */
const packageResolves = existsSync(join(root, "node_modules", "verbatim-llm", "package.json"));

/** The library's source folders, new layout first. */
const libraryFolders = [join(root, "packages", "library", "src"), join(root, "src")];

/** The source file of the entry point `verbatim-llm/<entry>`. */
function entryFile(entry: string): string {
  const found = libraryFolders
    .map((folder) => join(folder, entry, "index.ts"))
    .find((file) => existsSync(file));
  if (found === undefined) {
    throw new Error(
      `verbatim-llm/${entry} names no entry point: none of ${libraryFolders
        .map((folder) => join(folder, entry, "index.ts"))
        .join(", ")} exists`,
    );
  }
  return found;
}

/** The example as it can run here: unchanged, or with each entry point mapped to its source file. */
function runnable(source: string): string {
  if (packageResolves) return source;
  return source.replace(
    /(["'])verbatim-llm\/([a-z-]+)\1/g,
    (_whole, quote: string, entry: string) =>
      `${quote}${pathToFileURL(entryFile(entry)).href}${quote}`,
  );
}

/** A fresh folder under .verbatim-test/ (ignored by git), removed after the tests. */
async function scratchFolder(): Promise<string> {
  const parent = join(root, ".verbatim-test");
  await mkdir(parent, { recursive: true });
  const folder = await mkdtemp(join(parent, "readme-example-"));
  scratchFolders.push(folder);
  return folder;
}

/** Runs a TypeScript file as `node bin/run-ts.js <file>` would, in `cwd`; never throws. */
async function runTypeScript(file: string, cwd: string) {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, "bin", "run-ts.js"), file], {
      cwd,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/** The example's type errors under the repository's compiler settings (strict and more). */
function typeErrors(files: readonly string[]): Map<string, string[]> {
  const config = ts.readConfigFile(join(root, "tsconfig.json"), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
  };
  if (!packageResolves) {
    options.paths = { "verbatim-llm/*": libraryFolders.map((folder) => `${folder}/*/index.ts`) };
  }
  const program = ts.createProgram(files, options);
  const found = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? "";
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const line =
      diagnostic.file === undefined || diagnostic.start === undefined
        ? 0
        : diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
    const list = found.get(file) ?? [];
    list.push(`${file}:${line}: ${text}`);
    found.set(file, list);
  }
  return found;
}

describe("README.md's library example", () => {
  const example = readmeExample(readme);

  it("runs as written (node bin/run-ts.js), prints what it says, and prints the same body after a second reopen", async () => {
    const folder = await scratchFolder();
    const file = join(folder, "example.mts");
    await writeFile(file, runnable(example));

    const first = await runTypeScript(file, folder);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const printed = first.stdout.replace(/\n$/, "").split("\n");
    const promised = promisedLines(example);
    expect(promised.length).toBeGreaterThan(0);
    expect(printed).toHaveLength(promised.length);
    promised.forEach((line, index) => {
      const shown = printed[index]!;
      expect(line.isPrefix ? shown.slice(0, line.text.length) : shown).toBe(line.text);
    });

    // The package holds the conversation and the image, named by its SHA-256, and the body
    // sends exactly those bytes.
    const images = join(folder, "Poster.silverpoint", "agent", "images");
    const [imageName, ...others] = await readdir(images);
    expect(others).toEqual([]);
    const bytes = await readFile(join(images, imageName!));
    expect(imageName).toBe(`${createHash("sha256").update(bytes).digest("hex")}.png`);
    expect(existsSync(join(folder, "Poster.silverpoint", "agent", "conversation.json"))).toBe(true);
    const body = JSON.parse(printed.at(-1)!) as {
      messages: { content: { type: string; source?: { data: string } }[] }[];
    };
    const image = body.messages[0]!.content.find((block) => block.type === "image");
    expect(image?.source?.data).toBe(bytes.toString("base64"));

    const second = await runTypeScript(file, folder);
    expect(second).toEqual(first);
  }, 120_000);

  it("type-checks with the repository's compiler settings; a wrong role in it would not", async () => {
    // Written under the repository, where @types/node resolves; removed after the tests.
    const folder = await scratchFolder();
    const good = join(folder, "example.mts");
    const wrong = join(folder, "example-wrong.mts");
    const wrongExample = example.replace('role: "user"', 'role: "human"');
    expect(wrongExample).not.toBe(example);
    // As written: without the workspace link, `paths` maps the entry points (typeErrors).
    await Promise.all([writeFile(good, example), writeFile(wrong, wrongExample)]);
    const errors = typeErrors([good, wrong]);
    expect(errors.get(good)).toEqual([]);
    expect(errors.get(wrong)?.join("\n")).toMatch(/"human"/);
  }, 120_000);

  it("is found after its marker, and a README without the marker or the block says so", () => {
    expect(example).toContain('from "verbatim-llm/archive"');
    expect(() => readmeExample("# no example here\n")).toThrow(/no "<!-- readme-example/);
    expect(() => readmeExample(`${marker} -->\n\n\`\`\`sh\nls\n\`\`\`\n`)).toThrow(
      /no ```ts block after/,
    );
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown file's headings (outside code blocks), repeated ones numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inCode = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) inCode = !inCode;
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (inCode || heading === null) continue;
    const anchor = anchorOf(heading[1]!.trim());
    const count = seen.get(anchor) ?? 0;
    anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
    seen.set(anchor, count + 1);
  }
  return anchors;
}

/** Relative links of a Markdown file that name a missing file or a heading the file lacks. */
function brokenLinks(file: string): string[] {
  const markdown = readFileSync(join(root, file), "utf8");
  const broken: string[] = [];
  for (const [, target] of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [path = "", anchor] = target!.split("#");
    const linked = path === "" ? join(root, file) : join(root, dirname(file), path);
    if (!existsSync(linked)) {
      broken.push(`${file}: ${target} (no such file)`);
    } else if (anchor !== undefined && !anchorsOf(readFileSync(linked, "utf8")).has(anchor)) {
      broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  return broken;
}

describe("README.md and docs/performance.md links", () => {
  it("every relative link names a file that exists and, with an anchor, a heading it has", () => {
    expect([...brokenLinks("README.md"), ...brokenLinks("docs/performance.md")]).toEqual([]);
  });

  it("a link to a missing heading is found (GitHub's anchors: punctuation dropped)", () => {
    const anchors = anchorsOf("# The echo upstream (`--upstream echo`): offline\n## Path safety\n");
    expect(anchors).toEqual(new Set(["the-echo-upstream---upstream-echo-offline", "path-safety"]));
    expect(anchors.has("path-safety-1")).toBe(false);
  });
});
