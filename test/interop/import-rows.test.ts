import { expect, it } from "vitest";
import { readFileSync } from "node:fs";
import {
  importConversationFile,
  type ConversationSource,
  type ImportedConversation,
} from "../../packages/library/src/interop/index.js";
import type { Message } from "../../packages/library/src/history/index.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import {
  appendImportedChain,
  appendImportedChainRows,
  type ChainImport,
} from "../../packages/server/src/gateway/import/chains.js";
import { ImportedChainRows } from "../../packages/server/src/gateway/import/chain-rows.js";
import {
  PREFIX_OPERATION,
  type StoredIds,
} from "../../packages/server/src/gateway/import/chain-keys.js";
import { SubagentLinks } from "../../packages/server/src/gateway/import/chain-links.js";
import type { StoreDatabase } from "../../packages/server/src/store/database.js";
import { describeDatabaseTargets } from "./database-targets.js";
import { fixtureFiles } from "./fixture-files.js";

/**
 * The import's own write path (ImportedChainRows) writes exactly the rows the gateway's
 * appendMessages path writes for the same conversations: conversations, branches, messages and
 * idempotency keys, ids aside (new random ones on each path) and the append keys'
 * `request_sha256` (the write's SHA-256 instead of a fingerprint of the request; documented in
 * chain-rows.ts). Also for a session that grew and one whose last turn changed.
 */
const NOW = new Date("2026-12-02T04:00:00.000Z");

async function conversationsOf(source: ConversationSource): Promise<ImportedConversation[]> {
  const folder = source === "codex" ? "codex" : "claude-code";
  const files = fixtureFiles(folder, ".jsonl");
  // Session files before sub-agent files, as the import does.
  const agent = (file: string) => file.split("/").pop()?.startsWith("agent-") === true;
  const found: ImportedConversation[] = [];
  for (const file of [...files.filter((file) => !agent(file)), ...files.filter(agent)]) {
    found.push(...(await importConversationFile(source, file, readFileSync(file))).conversations);
  }
  return found;
}

/** The conversation as it was earlier: without its last turns (or its last message changed). */
function earlier(imported: ImportedConversation, change: "grew" | "changed"): ImportedConversation {
  const history = imported.conversation.history;
  const cut = Math.max(1, Math.floor(history.length * 0.6));
  const kept: Message[] =
    change === "grew"
      ? history.slice(0, cut)
      : history.map((message, index) =>
          index === history.length - 1
            ? { role: message.role, content: [{ type: "text", text: "an answer changed since" }] }
            : message,
        );
  return { ...imported, conversation: { ...imported.conversation, history: kept } };
}

type Path = (imported: ImportedConversation, links: Record<string, string>) => Promise<ChainImport>;

async function importAll(
  conversations: readonly ImportedConversation[],
  path: Path,
  finish: () => Promise<void>,
): Promise<string[]> {
  const links = new SubagentLinks();
  const outcomes: string[] = [];
  for (const imported of conversations) {
    const outcome = await path(imported, links.metadataFor(imported));
    links.remember(imported, outcome.conversationId);
    outcomes.push(`${imported.name}:${outcome.outcome}:${outcome.forks ?? 0}`);
  }
  await finish();
  return outcomes;
}

function gatewayPath(database: StoreDatabase, subject: string): Path {
  const store = new GatewayMessageStore(database, { now: () => NOW });
  return (imported, links) => appendImportedChain(store, subject, imported, store.now(), links);
}

function leanPath(
  database: StoreDatabase,
  subject: string,
  writerThread = false,
): { path: Path; rows: ImportedChainRows } {
  // A small batch, so that the rows of one run go in several transactions.
  const rows = new ImportedChainRows(database, subject, {
    now: () => NOW,
    batchBytes: 64 * 1024,
    writerThread,
  });
  return { rows, path: (imported, links) => appendImportedChainRows(rows, imported, links) };
}

/** A subject's rows with ids replaced by labels made from the rows' content and place. */
async function normalizedRows(database: StoreDatabase, subject: string) {
  const db = database.db;
  const conversations = await db
    .selectFrom("ai_gateway_conversations")
    .selectAll()
    .where("subject_uid", "=", subject)
    .execute();
  const branches = await db
    .selectFrom("ai_gateway_branches")
    .selectAll()
    .where("subject_uid", "=", subject)
    .execute();
  const messages = await db
    .selectFrom("ai_gateway_messages")
    .selectAll()
    .where("subject_uid", "=", subject)
    .execute();
  const keys = await db
    .selectFrom("ai_gateway_idempotency_keys")
    .selectAll()
    .where("subject_uid", "=", subject)
    .execute();
  const label = new Map<string, string>();
  const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));
  // Conversations in the order of their metadata (ids left out) and their messages' content.
  const stripIds = (value: string) => value.replace(/conv_[0-9a-z]+/g, "conv");
  const signature = new Map<string, string>();
  for (const row of conversations) {
    const contents = messages
      .filter((message) => message.conversation_id === row.id)
      .map((message) => `${message.depth}:${text(message.content)}`)
      .sort();
    signature.set(row.id, `${stripIds(text(row.metadata))}\n${contents.join("\n")}`);
  }
  const sortedConversations = [...conversations].sort((a, b) =>
    (signature.get(a.id) ?? "").localeCompare(signature.get(b.id) ?? ""),
  );
  sortedConversations.forEach((row, index) => label.set(row.id, `conv-${index}`));
  const forkDepth = new Map(branches.map((row) => [row.id, row.fork_depth]));
  const sortedMessages = [...messages].sort(
    (a, b) =>
      (label.get(a.conversation_id) ?? "").localeCompare(label.get(b.conversation_id) ?? "") ||
      a.depth - b.depth,
  );
  // Depth by depth: a message's label is its parent's and its place among its siblings.
  const byParent = new Map<string, typeof messages>();
  for (const row of sortedMessages) {
    const parent = `${row.conversation_id}/${row.previous_message_id ?? ""}`;
    byParent.set(parent, [...(byParent.get(parent) ?? []), row]);
  }
  for (const row of sortedMessages) {
    if (label.has(row.id)) continue;
    const parent = `${row.conversation_id}/${row.previous_message_id ?? ""}`;
    const siblings = (byParent.get(parent) ?? []).sort(
      (a, b) =>
        (forkDepth.get(a.branch_id) ?? 0) - (forkDepth.get(b.branch_id) ?? 0) ||
        text(a.content).localeCompare(text(b.content)),
    );
    siblings.forEach((sibling, index) => {
      const up =
        sibling.previous_message_id === null
          ? (label.get(sibling.conversation_id) ?? "?")
          : (label.get(sibling.previous_message_id) ?? "?");
      label.set(sibling.id, `${up}/${index}`);
    });
  }
  for (const row of branches) {
    const first = sortedMessages.find((message) => message.branch_id === row.id);
    label.set(row.id, `branch:${first === undefined ? "?" : (label.get(first.id) ?? "?")}`);
  }
  const named = (id: string | null) => (id === null ? null : (label.get(id) ?? `unknown:${id}`));
  // A prefix key's result names its write's key (a digest of a random anchor on each path):
  // compared as the ids it stands for, and as a reference, not a list (issue 19).
  const appendIds = new Map(
    keys
      .filter((row) => row.operation === "append")
      .map((row) => [
        row.idempotency_key,
        (JSON.parse(text(row.result)) as { messageIds: string[] }).messageIds,
      ]),
  );
  const result = (value: string) => {
    const parsed = JSON.parse(value) as {
      conversationId: string;
      messageIds?: string[];
      appendKey?: string;
      messageCount?: number;
    };
    const ids =
      parsed.appendKey === undefined
        ? parsed.messageIds
        : appendIds.get(parsed.appendKey)?.slice(0, parsed.messageCount);
    return {
      conversationId: named(parsed.conversationId),
      fields: Object.keys(parsed),
      messageIds: ids?.map(named),
      // Every id a prefix stands for is stored, and as many as it says.
      complete: parsed.appendKey === undefined || ids?.length === parsed.messageCount,
    };
  };
  const sorted = <T>(rows: T[]) =>
    rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return {
    conversations: sorted(
      conversations.map((row) => ({
        ...row,
        id: named(row.id),
        subject_uid: "s",
        metadata: text(row.metadata).replace(/conv_[0-9a-z]+/g, (id) => named(id) ?? id),
      })),
    ),
    branches: sorted(
      branches.map((row) => ({
        ...row,
        id: named(row.id),
        subject_uid: "s",
        conversation_id: named(row.conversation_id),
        parent_branch_id: named(row.parent_branch_id),
      })),
    ),
    messages: sorted(
      messages.map((row) => ({
        ...row,
        id: named(row.id),
        subject_uid: "s",
        conversation_id: named(row.conversation_id),
        previous_message_id: named(row.previous_message_id),
        branch_id: named(row.branch_id),
        content: text(row.content),
        metadata: text(row.metadata),
      })),
    ),
    keys: sorted(
      keys.map((row) => ({
        operation: row.operation,
        // The digests name the anchor (a random id on each path); an append key's
        // request_sha256 is the write's SHA-256 on the import's path.
        request_sha256: /^[0-9a-f]{64}$/.test(row.request_sha256)
          ? "sha256"
          : /^[0-9a-f]{48}$/.test(row.request_sha256)
            ? "key digest"
            : row.request_sha256,
        result: result(text(row.result)),
        created_at: row.created_at,
      })),
    ),
  };
}

describeDatabaseTargets("the import's rows are the gateway's rows", (db) => {
  for (const source of ["claude-code", "codex"] as const) {
    it(`${source}: the same rows on both paths, first import, re-run, grown and changed sessions`, async () => {
      const all = await conversationsOf(source);
      expect(all.length).toBeGreaterThan(3);
      const gatewaySubject = `gateway-${source}`;
      const leanSubject = `lean-${source}`;
      const gateway = gatewayPath(db.database, gatewaySubject);
      const lean = leanPath(db.database, leanSubject);
      const flush = () => lean.rows.flush();
      const none = async () => undefined;
      // On SQLite, the import's writer thread too (chain-writer.ts).
      const threadSubject = `thread-${source}`;
      const threaded =
        db.database.location.dialect === "sqlite"
          ? leanPath(db.database, threadSubject, true)
          : undefined;
      // Half the conversations as they were earlier (shorter, or with another last answer).
      const before = all.map((imported, index) =>
        index % 2 === 0 ? earlier(imported, index % 4 === 0 ? "grew" : "changed") : imported,
      );
      for (const round of [before, all, all]) {
        const fromGateway = await importAll(round, gateway, none);
        const fromLean = await importAll(round, lean.path, flush);
        expect(fromLean).toEqual(fromGateway);
        if (threaded !== undefined)
          expect(await importAll(round, threaded.path, () => threaded.rows.flush())).toEqual(
            fromGateway,
          );
      }
      await threaded?.rows.close();
      const expected = await normalizedRows(db.database, gatewaySubject);
      const actual = await normalizedRows(db.database, leanSubject);
      expect(actual.messages.length).toBeGreaterThan(all.length);
      expect(actual.branches.length).toBeGreaterThan(actual.conversations.length);
      expect(actual.conversations).toEqual(expected.conversations);
      expect(actual.branches).toEqual(expected.branches);
      expect(actual.messages).toEqual(expected.messages);
      expect(actual.keys).toEqual(expected.keys);
      if (threaded !== undefined)
        expect(await normalizedRows(db.database, threadSubject)).toEqual(actual);
      // Issue 19: a prefix key refers to its write's key (no id list), and stands for ids that
      // are stored.
      const prefixes = actual.keys.filter((row) => row.operation === PREFIX_OPERATION);
      expect(prefixes.length).toBeGreaterThan(0);
      for (const row of prefixes) {
        expect(row.result.fields).toEqual(["conversationId", "appendKey", "messageCount"]);
        expect(row.result.complete).toBe(true);
      }
    });
  }

  it("issue 19: prefix keys recorded with their id list (earlier versions) are still read", async () => {
    const all = await conversationsOf("codex");
    const changed = all.map((imported) => earlier(imported, "changed"));
    const outcomes: Record<string, string[]> = {};
    const counts: Record<string, string> = {};
    for (const subject of ["prefix-reference", "prefix-list"]) {
      const lean = leanPath(db.database, subject);
      const flush = () => lean.rows.flush();
      await importAll(changed, lean.path, flush);
      if (subject === "prefix-list") {
        // As an earlier version wrote them: each prefix key with the ids, and the writes' own
        // keys gone, so that only the lists can give the ids.
        const rows = await db.database.db
          .selectFrom("ai_gateway_idempotency_keys")
          .selectAll()
          .where("subject_uid", "=", subject)
          .execute();
        const ids = new Map(
          rows.map((row) => [row.idempotency_key, JSON.parse(row.result) as StoredIds]),
        );
        const prefixRows = rows.filter((row) => row.operation === PREFIX_OPERATION);
        expect(prefixRows.length).toBeGreaterThan(0);
        for (const row of prefixRows) {
          const reference = JSON.parse(row.result) as { appendKey: string; messageCount: number };
          const write = ids.get(reference.appendKey);
          if (write === undefined) throw new Error("a prefix's write is missing");
          await db.database.db
            .updateTable("ai_gateway_idempotency_keys")
            .set({
              result: JSON.stringify({
                conversationId: write.conversationId,
                messageIds: write.messageIds.slice(0, reference.messageCount),
              }),
            })
            .where("subject_uid", "=", subject)
            .where("idempotency_key", "=", row.idempotency_key)
            .execute();
          await db.database.db
            .deleteFrom("ai_gateway_idempotency_keys")
            .where("subject_uid", "=", subject)
            .where("idempotency_key", "=", reference.appendKey)
            .execute();
        }
      }
      // The sessions as they are now: their last answer changed, so each forks after the
      // turns found through a prefix key (instead of a new conversation).
      outcomes[subject] = await importAll(all, lean.path, flush);
      const { rows } = await db.database.db
        .selectFrom("ai_gateway_messages")
        .select((eb) => [
          eb.fn.count<number>("id").as("messages"),
          eb.fn.count<number>("conversation_id").distinct().as("conversations"),
        ])
        .where("subject_uid", "=", subject)
        .execute()
        .then((found) => ({ rows: found }));
      counts[subject] = `${rows[0]?.conversations}:${rows[0]?.messages}`;
    }
    expect(outcomes["prefix-list"]).toEqual(outcomes["prefix-reference"]);
    expect(
      outcomes["prefix-list"]?.filter((outcome) => outcome.includes(":extended:")).length,
    ).toBe(
      outcomes["prefix-list"]?.filter((outcome) => !/:(empty|imported):/.test(outcome)).length,
    );
    expect(outcomes["prefix-list"]?.some((outcome) => outcome.includes(":extended:"))).toBe(true);
    // No conversation started again: as many conversations and messages on both subjects.
    expect(counts["prefix-list"]).toBe(counts["prefix-reference"]);
  });

  it("a refused conversation writes nothing and the others go on, with the gateway's error", async () => {
    const [first, second] = await conversationsOf("codex");
    if (first === undefined || second === undefined) throw new Error("fixtures missing");
    const history = first.conversation.history;
    const bad: ImportedConversation = {
      ...first,
      conversation: {
        ...first.conversation,
        history: [
          ...history,
          { role: "user", content: [{ type: "text", text: "nul \u0000 here" }] },
        ],
      },
    };
    const gateway = gatewayPath(db.database, "refused-gateway");
    const lean = leanPath(db.database, "refused-lean");
    const errorOf = async (path: Path) => {
      try {
        await path(bad, {});
        return undefined;
      } catch (error) {
        return (error as Error & { describe(): string }).describe();
      }
    };
    const expected = await errorOf(gateway);
    expect(expected).toBeDefined();
    expect(await errorOf(lean.path)).toBe(expected);
    expect((await lean.path(second, {})).outcome).toBe("imported");
    await lean.rows.flush();
    const stored = await db.database.db
      .selectFrom("ai_gateway_conversations")
      .select("metadata")
      .where("subject_uid", "=", "refused-lean")
      .execute();
    expect(stored.length).toBe(1);
  });
});
