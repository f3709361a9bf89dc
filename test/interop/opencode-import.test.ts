import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decodeConversation } from "../../packages/library/src/format/decode.js";
import { encodeConversation } from "../../packages/library/src/format/encode.js";
import type { FileImport } from "../../packages/library/src/interop/index.js";
import { importIntoPackages } from "../../packages/library/src/interop/package-import.js";
import { readConversationFile } from "../../packages/library/src/interop/package-file-import.js";
import { listSourceFiles } from "../../packages/library/src/interop/source-files.js";
import { acceptsFile } from "../../packages/library/src/interop/source-names.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixturesRoot, historyCalls, panelTexts, unansweredCalls } from "./fixture-files.js";
import { buildOpenCodeDatabase } from "./opencode-db-builder.js";

// issue 35 item 3 (OpenCode): the real files of test/fixtures/interop/opencode (SOURCES.md).

type Json = Record<string, unknown>;
interface Session {
  info: Json;
  messages: { info: Json; parts: Json[] }[];
}

// Sorted by name, the order a storage folder lists them in.
const exports = [
  "ses_39b4c1891ffezxPVc5OPmcqF33.json",
  "ses_39b5d713cffeRgAoxPIwS3Plus.json",
  "ses_39c0a3da8ffeFQWvKTGUJWivpv.json",
].map((name) => `${fixturesRoot}opencode/export/${name}`);
/** The export whose task call names its sub-session. */
const withTask = exports[1] ?? "";
/** The export with failed tool calls (two glob errors, one aborted task) and 23 messages. */
const withErrors = exports[2] ?? "";

/**
 * No real opencode.db may be redistributed (SOURCES.md, "Gaps"): the database form is read from
 * one built here from the three real exports with OpenCode 1.2.5's own schema and rows written
 * as OpenCode writes them (opencode-db-builder.ts). Its sessions are the exports'.
 */
const databaseDir = mkdtempSync(join(tmpdir(), "opencode-db-"));
const database = join(databaseDir, "opencode.db");
buildOpenCodeDatabase(
  database,
  exports.map((file) => JSON.parse(readFileSync(file, "utf8")) as Session),
);
afterAll(() => rmSync(databaseDir, { recursive: true, force: true }));

/** A source file's name in the tests' titles. */
const label = (file: string): string =>
  file === database ? "opencode.db built from the three exports" : file.slice(fixturesRoot.length);

/** The sessions of the built database, read here with node:sqlite independently of the importer. */
function databaseSessions(file: string): Session[] {
  const { DatabaseSync } = createRequire(import.meta.url)("node:sqlite") as {
    DatabaseSync: new (
      path: URL,
      options: { readOnly: boolean },
    ) => {
      prepare(sql: string): { all(...values: unknown[]): Json[] };
      close(): void;
    };
  };
  // Immutable: reading must not create -wal or -shm files beside it.
  const db = new DatabaseSync(new URL(`file://${file}?immutable=1`), { readOnly: true });
  try {
    return db
      .prepare("SELECT * FROM session ORDER BY id")
      .all()
      .map((row) => ({
        info: { id: row.id },
        messages: db
          .prepare("SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id")
          .all(row.id)
          .map((message) => ({
            info: {
              ...(JSON.parse(String(message.data)) as Json),
              id: message.id,
              sessionID: message.session_id,
            },
            parts: db
              .prepare("SELECT * FROM part WHERE message_id = ? ORDER BY id")
              .all(message.id)
              .map((part) => ({
                ...(JSON.parse(String(part.data)) as Json),
                id: part.id,
                sessionID: part.session_id,
                messageID: part.message_id,
              })),
          })),
      }));
  } finally {
    db.close();
  }
}

const exportSession = (file: string): Session => JSON.parse(readFileSync(file, "utf8")) as Session;
/** What a source holds: an export's session, or the exports the database was built from. */
const sourceSessions = (file: string): Session[] =>
  file === database ? exports.map(exportSession) : [exportSession(file)];

async function importPath(file: string): Promise<FileImport> {
  const read = await readConversationFile("opencode", file);
  if (read.result === undefined) throw new Error(read.reason);
  return read.result;
}

const state = (part: Json): Json => (part.state ?? {}) as Json;
const leftOutCount = (result: FileImport, what: string): number =>
  result.leftOut
    .filter((entry) => entry.what === what)
    .reduce((sum, entry) => sum + entry.count, 0);

describe("opencode importer on the real files: every message and part imported or reported (issue 35 item 3)", () => {
  for (const file of [...exports, database]) {
    it(`${label(file)}: the account matches the source, parts are kept or named in the report`, async () => {
      const result = await importPath(file);
      const sessions = sourceSessions(file);
      const parts = sessions.flatMap((session) => session.messages.flatMap((m) => m.parts));
      const records =
        sessions.length + sessions.reduce((sum, s) => sum + s.messages.length, 0) + parts.length;
      expect(result.account.lines).toBe(records);
      expect(result.account.imported + result.account.leftOut).toBe(records);
      expect(result.conversations).toHaveLength(sessions.length);

      const { calls, results } = historyCalls(result.conversations);
      const shown = panelTexts(result.conversations);
      const history = new Set(
        result.conversations.flatMap(({ conversation }) =>
          conversation.history.flatMap((message) =>
            message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])),
          ),
        ),
      );
      let leftOutParts = 0;
      for (const part of parts) {
        switch (part.type) {
          case "text":
            if (part.text === "" || part.ignored === true) leftOutParts++;
            else expect(history.has(String(part.text)), String(part.id)).toBe(true);
            break;
          case "reasoning":
            expect(shown.has(String(part.text)), String(part.id)).toBe(true);
            break;
          case "tool": {
            expect(calls.has(String(part.callID)), String(part.id)).toBe(true);
            const status = state(part).status;
            if (status === "completed")
              expect(results.get(String(part.callID))).toBe(state(part).output);
            if (status === "error")
              expect(results.get(String(part.callID))).toBe(state(part).error);
            break;
          }
          case "step-finish":
            break;
          default:
            leftOutParts++;
        }
      }
      // Whole records left out: the parts above (step-start, empty text, …); no message.
      expect(result.account.leftOut).toBe(leftOutParts);
      expect(leftOutCount(result, "step-start part")).toBe(
        parts.filter((part) => part.type === "step-start").length,
      );
      for (const { conversation } of result.conversations) {
        expect(unansweredCalls(conversation)).toEqual([]);
        // Each saved conversation is valid format 1.
        expect(decodeConversation(encodeConversation(conversation)).ok).toBe(true);
      }
    });

    it(`${label(file)}: usage and cost per model call, as OpenCode states them`, async () => {
      const result = await importPath(file);
      const finishes = sourceSessions(file)
        .flatMap((session) => session.messages.flatMap((m) => m.parts))
        .filter((part) => part.type === "step-finish");
      const calls = result.conversations.flatMap((imported) => [
        ...(imported.calls?.values() ?? []),
      ]);
      const sum = (pick: (tokens: Json) => number) =>
        finishes.reduce((total, part) => total + pick((part.tokens ?? {}) as Json), 0);
      const total = (key: "input" | "output" | "cacheRead") =>
        calls.reduce((sum, call) => sum + call.usage[key], 0);
      expect(total("input")).toBe(sum((tokens) => Number(tokens.input)));
      expect(total("output")).toBe(sum((tokens) => Number(tokens.output)));
      expect(total("cacheRead")).toBe(sum((tokens) => Number((tokens.cache as Json).read)));
      const cost = finishes.reduce((sum, part) => sum + Number(part.cost), 0);
      expect(calls.reduce((sum, call) => sum + (call.usage.reportedCost ?? 0), 0)).toBeCloseTo(
        cost,
        12,
      );
      for (const { conversation } of result.conversations)
        expect(conversation.estimatedCost.kind).toBe("reported");
      expect(new Set(calls.map((call) => call.model)).has(undefined)).toBe(false);
    });
  }

  it("the built opencode.db holds the exports' records (OpenCode reads them back as the export); each session imports as its export does", async () => {
    const byId = (list: Json[]): Json[] =>
      [...list].sort((a, b) => String(a.id).localeCompare(String(b.id)));
    const stored = databaseSessions(database);
    expect(stored.map((session) => session.info.id)).toEqual(
      exports.map((file) => exportSession(file).info.id).sort(),
    );
    for (const session of stored) {
      const source = exports
        .map(exportSession)
        .find((candidate) => candidate.info.id === session.info.id);
      expect(byId(session.messages.map((message) => message.info))).toEqual(
        byId(source?.messages.map((message) => message.info) ?? []),
      );
      expect(byId(session.messages.flatMap((message) => message.parts))).toEqual(
        byId(source?.messages.flatMap((message) => message.parts) ?? []),
      );
    }
    const fromDatabase = (await importPath(database)).conversations;
    for (const file of exports) {
      const [fromExport] = (await importPath(file)).conversations;
      const same = fromDatabase.find((imported) => imported.name === fromExport?.name);
      expect(same?.conversation.history, label(file)).toEqual(fromExport?.conversation.history);
      expect([...(same?.calls?.values() ?? [])].map((call) => call.usage)).toEqual(
        [...(fromExport?.calls?.values() ?? [])].map((call) => call.usage),
      );
    }
  });

  it("a task call names the sub-session it ran (the link a sub-agent's chain gets)", async () => {
    const [first] = (await importPath(withTask)).conversations;
    expect([...(first?.subagentCalls ?? new Map<string, string>()).keys()]).toContain(
      "ses_39b5d3ed8ffea9fQ9vQMuZnTtO",
    );
  });

  it("a failed tool call is an error result; text a terminal printed before the JSON is skipped and reported", async () => {
    const dir = mkdtempSync(join(tmpdir(), "opencode-prefix-"));
    try {
      const file = join(dir, "captured.json");
      writeFileSync(
        file,
        Buffer.concat([
          Buffer.from("Exporting session: ses_39c0a3da8ffeFQWvKTGUJWivpv"),
          readFileSync(withErrors),
        ]),
      );
      const result = await importPath(file);
      expect(result.conversations).toHaveLength(1);
      expect(result.leftOut.map((entry) => entry.what)).toContain("text before the export's JSON");
      const errors = result.conversations[0]?.conversation.history
        .flatMap((message) => message.content)
        .filter((block) => block.type === "toolResult" && block.isError);
      expect(errors).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a JSON file that is not OpenCode's is reported as left out, not imported", async () => {
    const dir = mkdtempSync(join(tmpdir(), "opencode-other-"));
    try {
      const file = join(dir, "other.json");
      writeFileSync(file, '{"hello": "world"}');
      const result = await importPath(file);
      expect(result.conversations).toEqual([]);
      expect(result.account).toEqual({ file, lines: 1, imported: 0, leftOut: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * No public storage folder could be copied (SOURCES.md, "Gaps"): the storage reader is checked on
 * the real export split the way OpenCode's storage writes a session (session, message and part
 * files, each record as OpenCode stores it), built here at test time.
 */
function writeStorage(root: string, session: Session, project = "global"): string {
  const sessionFile = join(root, "storage", "session", project, `${String(session.info.id)}.json`);
  mkdirSync(join(root, "storage", "session", project), { recursive: true });
  writeFileSync(sessionFile, JSON.stringify(session.info, null, 2));
  for (const message of session.messages) {
    const messages = join(root, "storage", "message", String(session.info.id));
    mkdirSync(messages, { recursive: true });
    writeFileSync(
      join(messages, `${String(message.info.id)}.json`),
      JSON.stringify(message.info, null, 2),
    );
    const parts = join(root, "storage", "part", String(message.info.id));
    mkdirSync(parts, { recursive: true });
    for (const part of message.parts)
      writeFileSync(join(parts, `${String(part.id)}.json`), JSON.stringify(part, null, 2));
  }
  return sessionFile;
}

describe("opencode storage folder and packages (issue 35 item 3)", () => {
  const dirs: string[] = [];
  const temp = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a storage folder (or its parent) is searched for session files; each imports as its export does", async () => {
    const root = temp("opencode-storage-");
    for (const file of exports) writeStorage(root, exportSession(file));
    const files = await listSourceFiles(root, ["."], (name, path) =>
      acceptsFile("opencode", name, path),
    );
    expect(files.map((file) => file.slice(root.length))).toEqual([
      "/storage/session/global/ses_39b4c1891ffezxPVc5OPmcqF33.json",
      "/storage/session/global/ses_39b5d713cffeRgAoxPIwS3Plus.json",
      "/storage/session/global/ses_39c0a3da8ffeFQWvKTGUJWivpv.json",
    ]);
    for (const [index, file] of files.entries()) {
      const fromStorage = await importPath(file);
      const fromExport = await importPath(exports[index] ?? "");
      expect(fromStorage.account).toEqual({ ...fromExport.account, file });
      expect(fromStorage.conversations[0]?.conversation.history).toEqual(
        fromExport.conversations[0]?.conversation.history,
      );
    }
  });

  it("packages: a re-run changes nothing; a session that grew updates its package", async () => {
    const root = temp("opencode-grow-");
    const into = join(root, "packages");
    const full = exportSession(exports[0] ?? "");
    const file = join(root, "session.json");
    writeFileSync(file, JSON.stringify({ ...full, messages: full.messages.slice(0, 4) }));
    const first = await importIntoPackages({ source: "opencode", files: [file], into, jobs: 1 });
    expect(first.totals.imported).toBe(1);
    const again = await importIntoPackages({ source: "opencode", files: [file], into, jobs: 1 });
    expect(again.totals.unchanged).toBe(1);
    writeFileSync(file, JSON.stringify(full));
    const grown = await importIntoPackages({ source: "opencode", files: [file], into, jobs: 1 });
    expect(grown.totals.updated).toBe(1);
    // The database's sessions are the exports': into packages of their own (a package keeps
    // one source file).
    const fromDb = join(root, "packages-db");
    const db = await importIntoPackages({
      source: "opencode",
      files: [database],
      into: fromDb,
      jobs: 1,
    });
    expect(db.totals.imported).toBe(3);
    // The todo table (the last todowrite call's list) is reported with its row count.
    expect(db.leftOut.find((entry) => entry.what === "table todo")?.reason).toMatch(/^2 row\(s\)/);
    const dbAgain = await importIntoPackages({
      source: "opencode",
      files: [database],
      into: fromDb,
      jobs: 1,
    });
    expect(dbAgain.totals.unchanged).toBe(3);
  });
});

interface Report {
  conversations: { name: string; outcome: string; lastMessageId?: string; messages: number }[];
}

describeDatabaseTargets(
  "verbatim import opencode --into <database> --subject S (issue 35 item 3)",
  (db) => {
    const importJson = (paths: string[], subject: string) =>
      db.run(["import", "opencode", ...paths, "--into", db.target, "--subject", subject, "--json"]);
    // The exports for one subject, the database built from them for another (the same
    // sessions: each subject gets its own chains).
    for (const [subject, paths] of [
      ["alice", exports],
      ["bob", [database]],
    ] as const) {
      it(`${subject === "alice" ? "the exports" : "the built opencode.db"}: each session becomes one chain holding its history; a re-run writes nothing`, async () => {
        const result = await importJson([...paths], subject);
        expect(result.code, result.err).toBe(0);
        const report = JSON.parse(result.out) as Report;
        expect(report.conversations.map((entry) => entry.outcome)).toEqual([
          "imported",
          "imported",
          "imported",
        ]);
        const store = new GatewayMessageStore(db.database);
        for (const file of paths) {
          for (const imported of (await importPath(file)).conversations) {
            const entry = report.conversations.find(
              (candidate) => candidate.name === imported.name,
            );
            const chain = await store.readFullChain(subject, entry?.lastMessageId ?? "");
            expect(
              chain.map((message) => ({ role: message.role, content: message.content })),
            ).toEqual(
              imported.conversation.history.map((message) => ({
                role: message.role,
                content: message.content,
              })),
            );
          }
        }
        const again = JSON.parse((await importJson([...paths], subject)).out) as Report;
        expect(again.conversations.map((entry) => entry.outcome)).toEqual([
          "unchanged",
          "unchanged",
          "unchanged",
        ]);
      });
    }

    it("a session that went on continues its chain (extended)", async () => {
      const root = mkdtempSync(join(tmpdir(), "opencode-db-grow-"));
      try {
        const full = exportSession(exports[0] ?? "");
        const file = join(root, "session.json");
        writeFileSync(file, JSON.stringify({ ...full, messages: full.messages.slice(0, 4) }));
        const first = JSON.parse((await importJson([file], "carol")).out) as Report;
        expect(first.conversations[0]?.outcome).toBe("imported");
        writeFileSync(file, JSON.stringify(full));
        const grown = JSON.parse((await importJson([file], "carol")).out) as Report;
        expect(grown.conversations[0]?.outcome).toBe("extended");
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  },
);
