import { expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bufferIO, main } from "../../packages/library/src/cli/index.js";
import {
  importConversationFile,
  importTrajectoryFile,
} from "../../packages/library/src/interop/index.js";
import { progressLine } from "../../packages/library/src/internal/index.js";
import {
  describeLocation,
  parseDatabaseLocation,
} from "../../packages/server/src/store/location.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixtureFiles, fixturesRoot } from "./fixture-files.js";

// Issue 19: `verbatim import … --into <database>` draws the same progress bar on stderr as an
// import into packages (files, bytes, messages; rows for jobs), on a terminal only: nothing
// with --json or when stderr is not a terminal.

const sessionFolder = `${fixturesRoot}claude-code/2.1-subagents`;
const sessionFiles = fixtureFiles("claude-code/2.1-subagents", ".jsonl");

async function run(argv: string[], stderrIsTTY: boolean) {
  const io = bufferIO({ stderrIsTTY });
  const code = await main(argv, io);
  return { code, out: io.out().toString("utf8"), err: io.err() };
}

/** The frames the bar draws, one per file, each starting with a carriage return. */
function frames(err: string): string[] {
  expect(err.endsWith("\n")).toBe(true);
  return err.slice(0, -1).split("\r").slice(1);
}

const size = (files: readonly string[]): number =>
  files.reduce((sum, file) => sum + statSync(file).size, 0);

/** The bar's last frame for the session folder: every file, byte and history message. */
async function lastSessionFrame(): Promise<string> {
  let messages = 0;
  for (const file of sessionFiles) {
    const result = await importConversationFile("claude-code", file, readFileSync(file));
    for (const imported of result.conversations) messages += imported.conversation.history.length;
  }
  const totalBytes = size(sessionFiles);
  return progressLine({ files: 2, totalFiles: 2, bytes: totalBytes, totalBytes, messages });
}

describeDatabaseTargets("the progress bar of an import into a database (issue 19)", (db) => {
  const into = (subject: string) => ["--into", db.target, "--subject", subject];
  const databaseName = () =>
    describeLocation(
      parseDatabaseLocation(db.target.startsWith("sqlite:") ? db.target.slice(7) : db.target),
    );

  it("is not drawn when stderr is not a terminal: stderr stays empty, stdout holds the summary alone", async () => {
    const result = await run(["import", "claude-code", sessionFolder, ...into("quiet")], false);
    expect(result.code, result.err).toBe(0);
    expect(result.err).toBe("");
    expect(result.out).toBe(
      [
        `2 file(s) into ${databaseName()} for quiet`,
        "imported 2, extended 0, skipped as already imported 0, without history 0, refused 0",
        "left out (each reported; --json lists every file, with the count and first 1000 line numbers of each):",
        "  toolUseResult: 34 line(s) in 2 file(s): Claude Code's structured copy of a tool result for its own display; the result the model got is kept as the tool result",
        "  thinking signature: 11 line(s) in 1 file(s): format 1 keeps no provider-signed material (A23); the thinking text is kept as a thinking item",
        "  file-history-snapshot line: 2 line(s) in 1 file(s): Claude Code's backups of edited files for its own undo, not conversation",
        "",
      ].join("\n"),
    );
  });

  it("is not drawn with --json, even on a terminal: stdout is the JSON report alone", async () => {
    const result = await run(
      ["import", "claude-code", sessionFolder, ...into("json"), "--json"],
      true,
    );
    expect(result.code, result.err).toBe(0);
    expect(result.err).toBe("");
    const report = JSON.parse(result.out) as { conversations: { outcome: string }[] };
    expect(report.conversations.map((entry) => entry.outcome)).toEqual(["imported", "imported"]);
  });

  it("is drawn on a terminal: one frame per file with files, bytes and history messages, then a newline", async () => {
    const result = await run(["import", "claude-code", sessionFolder, ...into("tty")], true);
    expect(result.code, result.err).toBe(0);
    const drawn = frames(result.err);
    expect(drawn).toHaveLength(2);
    expect(drawn[1]).toBe(await lastSessionFrame());
    expect(drawn[0]).toMatch(/^\[#*-+\] 1\/2 files, /);
    expect(result.out.startsWith("2 file(s) into ")).toBe(true);
  });

  it("is drawn for trajectories imported as jobs, counting their rows", async () => {
    const files = fixtureFiles("swe-agent", ".traj");
    const result = await run(
      ["import", "swe-agent", `${fixturesRoot}swe-agent`, ...into("jobs")],
      true,
    );
    expect(result.code, result.err).toBe(0);
    const rows = files.reduce(
      (sum, file) => sum + importTrajectoryFile("swe-agent", file, readFileSync(file)).rows.length,
      0,
    );
    const totalBytes = size(files);
    const drawn = frames(result.err);
    expect(drawn).toHaveLength(files.length);
    expect(drawn[drawn.length - 1]).toBe(
      progressLine({
        files: files.length,
        totalFiles: files.length,
        bytes: totalBytes,
        totalBytes,
        messages: rows,
      }),
    );
  });
});

it("an import into packages draws the same bar on a terminal and nothing otherwise (issue 19)", async () => {
  const folder = mkdtempSync(join(tmpdir(), "verbatim-import-progress-"));
  try {
    const argv = ["import", "claude-code", sessionFolder, "--into", join(folder, "packages")];
    const quiet = await run(argv, false);
    expect(quiet.code, quiet.err).toBe(0);
    expect(quiet.err).toBe("");
    const drawn = await run(argv, true);
    expect(drawn.code, drawn.err).toBe(0);
    expect(frames(drawn.err).at(-1)).toBe(await lastSessionFrame());
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
