import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prefixHashes } from "./chain-matching.js";
import { PrefixHashCache } from "./prefix-cache.js";

interface ClientMessage {
  readonly role: string;
  readonly text: string;
  readonly asString: boolean;
  readonly marked: boolean;
}

/** A message as clients write it: string or block content, a cache marker or not. */
const messageArbitrary: fc.Arbitrary<ClientMessage> = fc.record({
  role: fc.constantFrom("user", "assistant"),
  text: fc.string({ maxLength: 4 }),
  asString: fc.boolean(),
  marked: fc.boolean(),
});

function wire(message: ClientMessage): unknown {
  if (message.asString && !message.marked) return { role: message.role, content: message.text };
  const block: Record<string, unknown> = { type: "text", text: message.text };
  if (message.marked) block["cache_control"] = { type: "ephemeral" };
  return { content: [block], role: message.role };
}

/** How the next call's history comes from the last: extended, cut, or one message rewritten. */
const changeArbitrary = fc.oneof(
  fc.record({
    kind: fc.constant("append" as const),
    messages: fc.array(messageArbitrary, { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant("cut" as const), keep: fc.nat(8) }),
  fc.record({ kind: fc.constant("rewrite" as const), at: fc.nat(8), message: messageArbitrary }),
);

describe("the prefix hashes of recorded calls, reusing the session's last call", () => {
  it("always equal prefixHashes, whatever the calls before (and with a cache too small to keep them)", () => {
    fc.assert(
      fc.property(
        fc.array(messageArbitrary, { minLength: 1, maxLength: 6 }),
        fc.array(changeArbitrary, { maxLength: 12 }),
        fc.constantFrom(32 * 1024 * 1024, 200, 0),
        (first, changes, maxBytes) => {
          const cache = new PrefixHashCache(maxBytes);
          let history = first.map(wire);
          expect(cache.prefixHashes("anthropic-messages", history)).toEqual(
            prefixHashes("anthropic-messages", history),
          );
          for (const change of changes) {
            if (change.kind === "append") history = [...history, ...change.messages.map(wire)];
            else if (change.kind === "cut") history = history.slice(0, Math.max(1, change.keep));
            else if (change.at < history.length) {
              history = history.map((message, index) =>
                index === change.at ? wire(change.message) : message,
              );
            }
            for (const seed of ["anthropic-messages", "openai-chat"]) {
              expect(cache.prefixHashes(seed, history)).toEqual(prefixHashes(seed, history));
            }
          }
          expect(cache.size.bytes).toBeLessThanOrEqual(maxBytes);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("issue 33: a message given again as the same value is not serialised again", () => {
    let reads = 0;
    /** A message whose content counts the times it is read. */
    const counted = (text: string) => {
      const message: Record<string, unknown> = { role: "user" };
      Object.defineProperty(message, "content", {
        enumerable: true,
        get: () => {
          reads++;
          return [{ type: "text", text }];
        },
      });
      return message;
    };
    const history = [counted("one"), counted("two"), counted("three")];
    const cache = new PrefixHashCache();
    const first = cache.prefixHashes("anthropic-messages", history);
    expect(first).toEqual(prefixHashes("anthropic-messages", history));
    const next = [...history, { role: "assistant", content: "four" }];
    reads = 0;
    const hashes = cache.prefixHashes("anthropic-messages", next);
    // The first message once (the session's name); the others not at all.
    expect(reads).toBe(1);
    expect(hashes).toEqual(prefixHashes("anthropic-messages", next));
  });
});
