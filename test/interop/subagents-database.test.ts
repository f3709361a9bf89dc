import { expect, it } from "vitest";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import type { GatewayMessage } from "../../packages/server/src/gateway/index.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixturesRoot, jsonLines } from "./fixture-files.js";

interface Report {
  conversations: {
    name: string;
    sourceId: string;
    outcome: string;
    conversationId?: string;
    lastMessageId?: string;
  }[];
}

/** The text of every text block of a chain's assistant messages. */
function assistantTexts(chain: readonly GatewayMessage[]): string[] {
  return chain
    .filter((message) => message.role === "assistant")
    .flatMap((message) => message.content)
    .flatMap((block) => (block.type === "text" ? [block.text] : []));
}

describeDatabaseTargets(
  "Claude Code sub-agents into a database: chains of their own, linked to their session",
  (db) => {
    const run = db.run;
    async function importFolder(folder: string, subject: string): Promise<Report> {
      const result = await run([
        "import",
        "claude-code",
        `${fixturesRoot}claude-code/${folder}`,
        "--into",
        db.target,
        "--subject",
        subject,
        "--json",
      ]);
      expect(result.code, result.err).toBe(0);
      return JSON.parse(result.out) as Report;
    }

    async function chainOf(subject: string, entry: Report["conversations"][number] | undefined) {
      const store = new GatewayMessageStore(db.database);
      const chain = await store.readFullChain(subject, entry?.lastMessageId ?? "");
      const conversation = await store.getConversation(subject, entry?.conversationId ?? "");
      return { chain, metadata: conversation.metadata };
    }

    for (const folder of ["2.1-subagents", "2.1-real", "2.0-agent-files"]) {
      it(`${folder}: each sub-agent is a conversation of its own whose metadata names its session's conversation; none of its answers is in the main chain`, async () => {
        const subject = `links-${folder}`;
        const report = await importFolder(folder, subject);
        const subagents = report.conversations.filter((entry) =>
          entry.sourceId.includes("/agent-"),
        );
        expect(subagents.length).toBeGreaterThan(0);
        for (const entry of subagents) {
          const session = entry.sourceId.slice(0, entry.sourceId.indexOf("/agent-"));
          const main = report.conversations.find((candidate) => candidate.sourceId === session);
          expect(main, `the session ${session} of ${entry.sourceId}`).toBeDefined();
          const sub = await chainOf(subject, entry);
          expect(sub.metadata).toMatchObject({
            source: "claude-code",
            source_id: entry.sourceId,
            parent_source_id: session,
            agent_id: entry.sourceId.slice(entry.sourceId.indexOf("/agent-") + "/agent-".length),
            parent_conversation_id: main?.conversationId,
          });
          expect(entry.conversationId).not.toBe(main?.conversationId);
          const parent = await chainOf(subject, main);
          const mainTexts = new Set(assistantTexts(parent.chain));
          const own = assistantTexts(sub.chain).filter((text) => text.length > 40);
          expect(own.length).toBeGreaterThan(0);
          for (const text of own) expect(mainTexts.has(text), text.slice(0, 80)).toBe(false);
          expect(parent.metadata["parent_source_id"]).toBeUndefined();
        }
      });
    }

    it("2.1: the sub-agent's metadata names the Task call of the main chain that ran it", async () => {
      const subject = "links-call";
      const report = await importFolder("2.1-subagents", subject);
      const entry = report.conversations.find((candidate) =>
        candidate.sourceId.endsWith("/agent-a485154"),
      );
      const main = report.conversations.find((candidate) => !candidate.sourceId.includes("/"));
      const sub = await chainOf(subject, entry);
      const callId = sub.metadata["parent_tool_call_id"] ?? "";
      const parent = await chainOf(subject, main);
      const calls = parent.chain
        .flatMap((message) => message.content)
        .flatMap((block) => (block.type === "toolCall" ? [block] : []));
      expect(calls.find((call) => call.id === callId)?.name).toBe("Task");
    });

    it("1.x: the isSidechain lines of a session file are a chain of their own; the main chain has none of their answers", async () => {
      const subject = "links-sidechain";
      const file = "1.0-real/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";
      const report = await importFolder(file, subject);
      const main = report.conversations.find((entry) => !entry.sourceId.includes("/agent-"));
      const sidechains = report.conversations.filter((entry) => entry.sourceId.includes("/agent-"));
      expect(sidechains.length).toBeGreaterThan(0);
      const sideTexts = jsonLines(`${fixturesRoot}claude-code/${file}`)
        .filter(({ value }) => value?.["isSidechain"] === true && value["type"] === "assistant")
        .flatMap(({ value }) => {
          const content = (value?.["message"] as { content?: unknown } | undefined)?.content;
          return Array.isArray(content)
            ? content.flatMap((block: { type?: string; text?: string }) =>
                block.type === "text" && typeof block.text === "string" ? [block.text] : [],
              )
            : [];
        });
      expect(sideTexts.length).toBeGreaterThan(0);
      const mainTexts = new Set(assistantTexts((await chainOf(subject, main)).chain));
      const sideChainTexts = new Set<string>();
      for (const entry of sidechains) {
        const side = await chainOf(subject, entry);
        expect(side.metadata).toMatchObject({ parent_conversation_id: main?.conversationId });
        for (const text of assistantTexts(side.chain)) sideChainTexts.add(text);
      }
      for (const text of sideTexts) {
        expect(mainTexts.has(text)).toBe(false);
        expect(sideChainTexts.has(text)).toBe(true);
      }
    });
  },
);
