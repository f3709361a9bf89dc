import { describe, expect, it } from "vitest";
import type { ImportedConversation } from "../../packages/library/src/interop/index.js";
import type { IdempotencyKeyRow } from "../../packages/server/src/store/repositories/gateway-idempotency.js";
import {
  PREFIX_OPERATION,
  prefixKeys,
  runDigests,
  runKeys,
  storedWrite,
  writeDigest,
  writeKey,
} from "../../packages/server/src/gateway/import/chain-keys.js";

/**
 * Issue 19: the keys of an import's writes are made in linear time (one hash carried along a
 * write's turns) and name the same writes as before (a store written by an earlier version is
 * found again: a re-run writes nothing); a prefix key refers to its write's key.
 */
const imported = { source: "codex", sourceId: "session-1" } as ImportedConversation;
const turns = ["a", "b", "c"].map((digit) => ({ sha256: digit.repeat(64), messages: [1, 2] }));

describe("import keys (issue 19)", () => {
  it("a write's digest is the one earlier versions made (pinned values)", () => {
    expect(writeDigest(imported, "main", "msg_x", turns.slice(0, 1))).toBe(
      "8b78df09d114fa4f483bad40a53dca43d19481f47bee3ab7980e770510e8256d",
    );
    expect(writeDigest(imported, "main", null, turns.slice(0, 2))).toBe(
      "fdfe381054472f99c2eeeb8db19d8e265cf876093892d7716f7a7179bb4d6cf8",
    );
    expect(writeDigest(imported, "main", "msg_x", turns)).toBe(
      "e867c34157fdf86e683604515105b0ee410f10d2c78ea302a1342a4b141634e9",
    );
    expect(writeDigest(imported, "main", null, turns)).toBe(
      "cef930832d405bfb065293d104dea5ddda20225c650bec4e314a600fb8fff1d2",
    );
  });

  it("runDigests and runKeys give each run's own digest and key", () => {
    const digests = runDigests(imported, "branch-0", "msg_y", turns);
    expect(digests).toEqual(
      turns.map((_, index) =>
        writeDigest(imported, "branch-0", "msg_y", turns.slice(0, index + 1)),
      ),
    );
    expect(runKeys(imported, "main", null, turns, 1, 3)).toEqual([
      writeKey(imported, "main", null, turns.slice(1, 3)),
      writeKey(imported, "main", null, turns.slice(1, 2)),
    ]);
  });

  it("a prefix key refers to its write's key and counts its messages; both shapes are read", () => {
    const keys = prefixKeys(imported, "main", null, turns, {
      subject: "s",
      appendKey: "import-write",
      conversationId: "conv_1",
      now: "2026-12-02T00:00:00.000Z",
    });
    expect(keys.map((key) => key.row.idempotency_key)).toEqual([
      writeKey(imported, "main", null, turns.slice(0, 1)),
      writeKey(imported, "main", null, turns.slice(0, 2)),
    ]);
    const [first] = keys;
    expect(JSON.parse(first?.row.result ?? "")).toEqual({
      conversationId: "conv_1",
      appendKey: "import-write",
      messageCount: 2,
    });
    expect(storedWrite(first?.row)).toEqual(first?.reference);
    const listed: IdempotencyKeyRow = {
      ...(first?.row as IdempotencyKeyRow),
      result: JSON.stringify({ conversationId: "conv_1", messageIds: ["msg_1", "msg_2"] }),
    };
    expect(listed.operation).toBe(PREFIX_OPERATION);
    expect(storedWrite(listed)).toEqual({
      conversationId: "conv_1",
      messageIds: ["msg_1", "msg_2"],
    });
    expect(storedWrite({ ...listed, result: JSON.stringify({ conversationId: "conv_1" }) })).toBe(
      undefined,
    );
  });
});
