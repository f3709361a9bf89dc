import { expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importClaudeCodeFile } from "../../packages/library/src/interop/claude-code/import.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixtureFiles, fixturesRoot } from "./fixture-files.js";

interface Report {
  conversations: {
    name: string;
    outcome: string;
    conversationId?: string;
    lastMessageId?: string;
    messages: number;
  }[];
}

describeDatabaseTargets("verbatim import claude-code|codex --into <database> --subject S", (db) => {
  const run = db.run;
  const importJson = (source: string, path: string, subject: string) =>
    run(["import", source, path, "--into", db.target, "--subject", subject, "--json"]);
  it("each conversation becomes one chain of the subject holding its history as imported", async () => {
    const folder = `${fixturesRoot}claude-code/2.1-subagents`;
    const result = await importJson("claude-code", folder, "alice");
    expect(result.code, result.err).toBe(0);
    const report = JSON.parse(result.out) as Report;
    expect(report.conversations.map((entry) => entry.outcome)).toEqual(["imported", "imported"]);
    const store = new GatewayMessageStore(db.database);
    for (const file of fixtureFiles("claude-code/2.1-subagents", ".jsonl")) {
      for (const imported of importClaudeCodeFile(file, readFileSync(file)).conversations) {
        const entry = report.conversations.find((candidate) => candidate.name === imported.name);
        const chain = await store.readFullChain("alice", entry?.lastMessageId ?? "");
        expect(chain.map((message) => ({ role: message.role, content: message.content }))).toEqual(
          imported.conversation.history.map((message) => ({
            role: message.role,
            content: message.content,
          })),
        );
      }
    }
  });

  it("re-running the import writes nothing; another subject gets chains of its own", async () => {
    const folder = `${fixturesRoot}claude-code/2.1-subagents`;
    const again = JSON.parse((await importJson("claude-code", folder, "alice")).out) as Report;
    expect(again.conversations.map((entry) => entry.outcome)).toEqual(["unchanged", "unchanged"]);
    const bob = JSON.parse((await importJson("claude-code", folder, "bob")).out) as Report;
    expect(bob.conversations.map((entry) => entry.outcome)).toEqual(["imported", "imported"]);
  });

  it("the other branches of a session (rewinds, edits) are kept as forks where they leave the chain", async () => {
    const file = `${fixturesRoot}claude-code/2.0-project-folder/-Users-user-project/b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl`;
    const first = JSON.parse((await importJson("claude-code", file, "carol")).out) as {
      conversations: { conversationId: string; forks?: number; outcome: string }[];
    };
    expect(first.conversations[0]).toMatchObject({ outcome: "imported", forks: 2 });
    const store = new GatewayMessageStore(db.database);
    const conversationId = first.conversations[0]?.conversationId ?? "";
    const stored = await store.listMessages("carol", conversationId);
    const again = JSON.parse((await importJson("claude-code", file, "carol")).out) as typeof first;
    expect(again.conversations[0]).toMatchObject({ outcome: "unchanged", forks: 2 });
    expect((await store.listMessages("carol", conversationId)).length).toBe(stored.length);
    const imported = importClaudeCodeFile(file, readFileSync(file)).conversations[0];
    expect(imported?.branches?.length).toBe(2);
    expect(stored.length).toBeGreaterThan(imported?.conversation.history.length ?? 0);
  });

  it("a session that went on continues its chain (extended), keeping the messages stored before", async () => {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-import-db-"));
    try {
      const file = join(folder, "55604662-cf2a-4331-851a-ec234028f8ca.jsonl");
      const original = readFileSync(`${fixturesRoot}claude-code/2.1-real/short.jsonl`, "utf8");
      writeFileSync(file, original);
      const first = JSON.parse((await importJson("claude-code", file, "dave")).out) as Report;
      expect(first.conversations[0]?.outcome).toBe("imported");
      const lastLine = JSON.parse(original.trimEnd().split("\n").pop() ?? "{}") as {
        uuid?: string;
        sessionId?: string;
      };
      const more = [
        {
          type: "user",
          uuid: "later-1",
          parentUuid: lastLine.uuid,
          sessionId: lastLine.sessionId,
          message: { role: "user", content: "and then?" },
        },
        {
          type: "assistant",
          uuid: "later-2",
          parentUuid: "later-1",
          sessionId: lastLine.sessionId,
          message: {
            id: "msg_later",
            role: "assistant",
            content: [{ type: "text", text: "Then this." }],
          },
        },
      ];
      writeFileSync(file, original + more.map((line) => JSON.stringify(line)).join("\n") + "\n");
      const second = JSON.parse((await importJson("claude-code", file, "dave")).out) as Report;
      expect(second.conversations[0]?.outcome).toBe("extended");
      const store = new GatewayMessageStore(db.database);
      const chain = await store.readFullChain("dave", second.conversations[0]?.lastMessageId ?? "");
      const expected =
        importClaudeCodeFile(file, readFileSync(file)).conversations[0]?.conversation.history ?? [];
      expect(chain.map((message) => message.content)).toEqual(
        expected.map((message) => message.content),
      );
      expect(chain[0]?.id).toBe(
        (await store.readFullChain("dave", first.conversations[0]?.lastMessageId ?? ""))[0]?.id,
      );
      // The new turn continues the stored chain: nothing stored before is written again.
      const conversationId = second.conversations[0]?.conversationId ?? "";
      expect((await store.listMessages("dave", conversationId)).length).toBe(expected.length);
      // A fresh import is written in as few writes as the store allows (one here).
      const keys = await db.database.db
        .selectFrom("ai_gateway_idempotency_keys")
        .select("idempotency_key")
        .where("subject_uid", "=", "dave")
        .execute();
      expect(keys.length).toBe(2);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("a session whose newest answer changed gets a fork from the turn before it, in the same conversation; the earlier turns are not written again", async () => {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-import-db-"));
    try {
      const file = join(folder, "55604662-cf2a-4331-851a-ec234028f8ca.jsonl");
      const source = `${fixturesRoot}claude-code/2.1-real/tool_heavy.jsonl`;
      const original = readFileSync(source, "utf8");
      writeFileSync(file, original);
      const first = JSON.parse((await importJson("claude-code", file, "erin")).out) as Report;
      expect(first.conversations[0]?.outcome).toBe("imported");
      // Change the text of the newest assistant line: its turn differs, the ones before not.
      const lines = original.trimEnd().split("\n");
      const index = lines.findLastIndex(
        (line) => line.includes('"type":"text"') && line.includes('"assistant"'),
      );
      const changed = JSON.parse(lines[index] ?? "{}") as {
        message: { content: { type: string; text?: string }[] };
      };
      for (const block of changed.message.content)
        if (block.type === "text") block.text = "a different answer";
      lines[index] = JSON.stringify(changed);
      writeFileSync(file, `${lines.join("\n")}\n`);
      const second = JSON.parse((await importJson("claude-code", file, "erin")).out) as Report;
      const history =
        importClaudeCodeFile(file, readFileSync(file)).conversations[0]?.conversation.history ?? [];
      // The turn that holds the change starts at the user message before it.
      const changedAt = history.findIndex((message) =>
        JSON.stringify(message.content).includes("a different answer"),
      );
      let turnStart = changedAt;
      while (
        turnStart > 0 &&
        !(history[turnStart]?.role === "user" && history[turnStart - 1]?.role !== "tool")
      )
        turnStart--;
      expect(turnStart).toBeGreaterThan(0);
      expect(second.conversations[0]).toMatchObject({
        outcome: "extended",
        conversationId: first.conversations[0]?.conversationId,
      });
      const store = new GatewayMessageStore(db.database);
      const conversationId = first.conversations[0]?.conversationId ?? "";
      const stored = await store.listMessages("erin", conversationId);
      // Only the changed turn is written again, as a fork after the turn before it.
      expect(stored.length).toBe(history.length + history.length - turnStart);
      const chain = await store.readFullChain("erin", second.conversations[0]?.lastMessageId ?? "");
      expect(chain.map((message) => message.content)).toEqual(
        history.map((message) => message.content),
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("codex rollouts too; --subject is required and a trajectory source is refused", async () => {
    const codex = await run([
      "import",
      "codex",
      `${fixturesRoot}codex/0.129`,
      "--into",
      db.target,
      "--subject",
      "alice",
    ]);
    expect(codex.code, codex.err).toBe(0);
    expect(codex.out).toMatch(/imported 2, extended 0/);
    expect((await run(["import", "codex", fixturesRoot, "--into", db.target])).err).toMatch(
      /--subject is required/,
    );
    expect(
      (
        await run([
          "import",
          "swe-agent",
          fixturesRoot,
          "--into",
          db.target,
          "--subject",
          "alice",
          "--as",
          "chain",
        ])
      ).code,
    ).toBe(2);
  });
});
