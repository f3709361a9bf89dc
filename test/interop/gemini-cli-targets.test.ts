import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { importGeminiCliFile } from "../../packages/library/src/interop/gemini-cli/import.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixturesRoot } from "./fixture-files.js";

// Issue 35 item 3: `verbatim import gemini-cli <path…> --into <package folder | database>`,
// with a user's ~/.gemini layout built from the real corpus.

const folder = mkdtempSync(join(tmpdir(), "verbatim-gemini-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A ~/.gemini with the corpus's sessions in a project's chats/, and files never imported. */
function geminiHome(name: string): { home: string; chats: string } {
  const home = join(folder, name, ".gemini");
  const chats = join(home, "tmp", "0123abcd", "chats");
  mkdirSync(chats, { recursive: true });
  for (const file of [
    "json-2025-10/gemini-cli-pomodoro-timer.json",
    "json-2026-03/session-2026-03-18T01-58-b26e4930.json",
  ]) {
    const base = file.split("/").pop() ?? "";
    const target = base.startsWith("session-") ? base : `session-2025-10-21T20-04-0b23371a.json`;
    cpSync(join(fixturesRoot, "gemini-cli", file), join(chats, target));
  }
  mkdirSync(join(home, "tmp", "0123abcd", "logs"), { recursive: true });
  writeFileSync(join(home, "tmp", "0123abcd", "logs", "session-x.jsonl"), '{"not":"a session"}\n');
  writeFileSync(join(home, "settings.json"), "{}");
  return { home, chats };
}

async function run(argv: string[]) {
  const io = bufferIO({ cwd: folder });
  const code = await main(argv, io);
  return { code, out: io.out().toString("utf8"), err: io.err() };
}

interface Report {
  files: { file: string }[];
  conversations: { name: string; outcome: string; lastMessageId?: string }[];
  leftOut: { what: string }[];
}

describe("verbatim import gemini-cli <~/.gemini> --into <package folder> (issue 35 item 3)", () => {
  const { home, chats } = geminiHome("packages");
  const into = join(folder, "out");

  it("finds the sessions under ~/.gemini (not its logs or settings) and writes one package each", async () => {
    const first = await run(["import", "gemini-cli", home, "--into", into, "--json"]);
    expect(first.code, first.err).toBe(0);
    const report = JSON.parse(first.out) as Report;
    expect(report.files.length).toBe(2);
    expect(report.conversations.map((entry) => entry.outcome)).toEqual(["imported", "imported"]);
    expect(report.leftOut.map((entry) => entry.what)).toContain("tool resultDisplay");
  });

  it("a re-run with the same bytes changes nothing; a session that grew updates its package", async () => {
    const again = JSON.parse(
      (await run(["import", "gemini-cli", home, "--into", into, "--json"])).out,
    ) as Report;
    expect(again.conversations.map((entry) => entry.outcome)).toEqual(["unchanged", "unchanged"]);
    const file = join(chats, "session-2025-10-21T20-04-0b23371a.json");
    const session = JSON.parse(readFileSync(file, "utf8")) as { messages: object[] };
    session.messages.push({ id: "later", timestamp: "t", type: "user", content: "and then?" });
    writeFileSync(file, JSON.stringify(session, null, 2));
    const grown = JSON.parse(
      (await run(["import", "gemini-cli", chats, "--into", into, "--json"])).out,
    ) as Report;
    expect(grown.conversations.map((entry) => entry.outcome).sort()).toEqual([
      "unchanged",
      "updated",
    ]);
  });
});

describeDatabaseTargets(
  "verbatim import gemini-cli <path> --into <database> --subject S (issue 35 item 3)",
  (db) => {
    const importJson = async (path: string, subject: string) =>
      JSON.parse(
        (
          await db.run([
            "import",
            "gemini-cli",
            path,
            "--into",
            db.target,
            "--subject",
            subject,
            "--json",
          ])
        ).out,
      ) as Report;

    it("each session becomes a chain holding its history; a re-run writes nothing; a grown one continues", async () => {
      const { chats } = geminiHome(`db-${db.target.length}-${Date.now()}`);
      const first = await importJson(chats, "gina");
      expect(first.conversations.map((entry) => entry.outcome)).toEqual(["imported", "imported"]);
      const store = new GatewayMessageStore(db.database);
      const file = join(chats, "session-2025-10-21T20-04-0b23371a.json");
      const imported = importGeminiCliFile(file, readFileSync(file)).conversations[0];
      const entry = first.conversations.find((candidate) => candidate.name === imported?.name);
      const chain = await store.readFullChain("gina", entry?.lastMessageId ?? "");
      expect(chain.map((message) => ({ role: message.role, content: message.content }))).toEqual(
        imported?.conversation.history.map((message) => ({
          role: message.role,
          content: message.content,
        })),
      );
      const again = await importJson(chats, "gina");
      expect(again.conversations.map((candidate) => candidate.outcome)).toEqual([
        "unchanged",
        "unchanged",
      ]);
      const session = JSON.parse(readFileSync(file, "utf8")) as { messages: object[] };
      session.messages.push({ id: "later", timestamp: "t", type: "user", content: "and then?" });
      writeFileSync(file, JSON.stringify(session, null, 2));
      const grown = await importJson(file, "gina");
      expect(grown.conversations[0]?.outcome).toBe("extended");
    });
  },
);
