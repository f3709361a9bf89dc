import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { expect, it } from "vitest";
import { importClineTask } from "../../packages/library/src/interop/cline/import.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { writeClineNativeTask } from "./cline-native-task.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixtureFiles, fixturesRoot } from "./fixture-files.js";

interface Report {
  conversations: { name: string; outcome: string; lastMessageId?: string; messages: number }[];
}

// Issue 35 item 3 (cline): the database target of `verbatim import cline`.
describeDatabaseTargets(
  "issue 35 item 3: verbatim import cline --into <database> --subject S",
  (db) => {
    const importJson = async (path: string | string[], subject: string): Promise<Report> => {
      const result = await db.run([
        "import",
        "cline",
        ...(Array.isArray(path) ? path : [path]),
        "--into",
        db.target,
        "--subject",
        subject,
        "--json",
      ]);
      expect(result.code, result.err).toBe(0);
      return JSON.parse(result.out) as Report;
    };

    it("each task becomes one chain holding its history as imported; a re-run writes nothing", async () => {
      // The real Roo Code folders, and a Cline 3.51 folder written in the shapes Cline writes
      // (cline-native-task.ts: no licensed real one was found).
      const native = mkdtempSync(join(tmpdir(), "verbatim-cline-native-"));
      try {
        const nativeFile = writeClineNativeTask(native);
        const paths = [`${fixturesRoot}cline`, dirname(nativeFile)];
        const report = await importJson(paths, "alice");
        expect(report.conversations.map((entry) => entry.outcome)).toEqual([
          "imported",
          "imported",
          "imported",
        ]);
        const store = new GatewayMessageStore(db.database);
        for (const file of [
          ...fixtureFiles("cline", "api_conversation_history.json"),
          nativeFile,
        ]) {
          const imported = importClineTask(file, readFileSync(file)).conversations[0];
          const entry = report.conversations.find((candidate) => candidate.name === imported?.name);
          const chain = await store.readFullChain("alice", entry?.lastMessageId ?? "");
          expect(
            chain.map((message) => ({ role: message.role, content: message.content })),
          ).toEqual(
            imported?.conversation.history.map((message) => ({
              role: message.role,
              content: message.content,
            })),
          );
        }
        const again = await importJson(paths, "alice");
        expect(again.conversations.map((entry) => entry.outcome)).toEqual([
          "unchanged",
          "unchanged",
          "unchanged",
        ]);
      } finally {
        rmSync(native, { recursive: true, force: true });
      }
    });

    it("a task that went on continues its chain (extended)", async () => {
      const folder = mkdtempSync(join(tmpdir(), "verbatim-cline-db-"));
      try {
        const source = dirname(
          fixtureFiles("cline/roo-xml-subtask", "api_conversation_history.json")[0] ?? "",
        );
        const task = join(folder, basename(source));
        cpSync(source, task, { recursive: true });
        const first = await importJson(task, "bob");
        expect(first.conversations[0]?.outcome).toBe("imported");
        const api = join(task, "api_conversation_history.json");
        const grown = [
          ...(JSON.parse(readFileSync(api, "utf8")) as unknown[]),
          { role: "user", content: [{ type: "text", text: "and now?" }] },
        ];
        writeFileSync(api, JSON.stringify(grown));
        const second = await importJson(task, "bob");
        expect(second.conversations[0]).toMatchObject({
          outcome: "extended",
          messages: grown.length,
        });
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  },
);
