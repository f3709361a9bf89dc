import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openArchive } from "../../packages/library/src/archive/archive.js";
import { alreadyImported } from "../../packages/library/src/interop/archive-target.js";
import { importCodexRollout } from "../../packages/library/src/interop/codex/import.js";
import { importIntoPackages } from "../../packages/library/src/interop/index.js";
import { fixtureFiles } from "./fixture-files.js";

// Issue 19: a re-run of an import into packages recognises a package that already holds the
// same import from its conversation.json parsed as JSON, without opening the archive; anything
// else is left to the archive, which decides as before.

const folder = mkdtempSync(join(tmpdir(), "verbatim-package-rerun-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const files = fixtureFiles("codex", ".jsonl");

async function importedFrom(file: string) {
  const result = await importCodexRollout(file, readFileSync(file));
  const imported = result.conversations[0];
  if (imported === undefined) throw new Error(`no conversation in ${file}`);
  return imported;
}

describe("re-running an import into packages (issue 19)", () => {
  const into = join(folder, "packages");

  it("a re-run reports every package unchanged, with the same counts, and writes nothing", async () => {
    const first = await importIntoPackages({ source: "codex", files, into });
    expect(first.totals.imported).toBeGreaterThan(1);
    const times = first.conversations.map(
      (entry) => statSync(join(entry.path, "agent", "conversation.json")).mtimeMs,
    );
    const again = await importIntoPackages({ source: "codex", files, into });
    expect(again.totals).toMatchObject({ imported: 0, updated: 0, refused: 0 });
    expect(again.totals.unchanged).toBe(first.conversations.length);
    // The imageOmitted blocks the archive reads in each package, as the re-run counted them before.
    const omitted = [];
    for (const entry of again.conversations) {
      const { conversation } = await openArchive(entry.path);
      omitted.push(
        conversation.history
          .flatMap((message) => message.content)
          .filter((block) => block.type === "imageOmitted").length,
      );
    }
    expect(omitted.some((count) => count > 0)).toBe(true);
    expect(again.conversations.map((entry) => entry.imagesOmitted)).toEqual(omitted);
    expect(
      again.conversations.map(
        (entry) => statSync(join(entry.path, "agent", "conversation.json")).mtimeMs,
      ),
    ).toEqual(times);
  });

  it("recognises the package of the same import from its JSON alone", async () => {
    const file = files[0] as string;
    const imported = await importedFrom(file);
    const path = join(into, imported.name);
    expect(await alreadyImported(path, imported)).toMatchObject({
      outcome: "unchanged",
      path,
    });
    // Other source bytes (the session grew), another source id: the archive decides.
    expect(await alreadyImported(path, { ...imported, sourceSha256: "0".repeat(64) })).toBe(
      undefined,
    );
    expect(await alreadyImported(path, { ...imported, sourceId: "another" })).toBe(undefined);
    expect(await alreadyImported(join(into, "absent"), imported)).toBe(undefined);
  });

  it("a package it cannot read as its own import is left to the archive: a torn file is refused, a link is not followed", async () => {
    const file = files[0] as string;
    const imported = await importedFrom(file);
    const path = join(into, imported.name);
    const conversationFile = join(path, "agent", "conversation.json");
    const bytes = readFileSync(conversationFile);

    // A link in place of agent/ to a copy that would match.
    const linked = join(folder, "linked");
    await importIntoPackages({ source: "codex", files: [file], into: linked });
    const linkedPackage = join(linked, imported.name);
    rmSync(join(linkedPackage, "agent"), { recursive: true });
    symlinkSync(join(path, "agent"), join(linkedPackage, "agent"));
    expect(await alreadyImported(linkedPackage, imported)).toBe(undefined);

    // Another format version: not read as the import's.
    const text = bytes.toString("utf8").replace('"formatVersion" : 1', '"formatVersion" : 2');
    expect(text).not.toBe(bytes.toString("utf8"));
    writeFileSync(conversationFile, text);
    expect(await alreadyImported(path, imported)).toBe(undefined);

    // Torn: the archive reports it unreadable and the import refuses it, as before.
    writeFileSync(conversationFile, bytes.subarray(0, bytes.length >> 1));
    expect(await alreadyImported(path, imported)).toBe(undefined);
    const report = await importIntoPackages({ source: "codex", files: [file], into });
    expect(report.conversations[0]).toMatchObject({ outcome: "refused" });
    writeFileSync(conversationFile, bytes);
  });
});
