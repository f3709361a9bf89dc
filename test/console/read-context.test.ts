/**
 * Issue 20: the console reads an anchor's model-visible context in chunks (the chain's ids,
 * then the messages by id through the message cache) instead of the store's one read: the
 * same messages as the store's readContext, on both databases, for anchors after a fork, a
 * failure and a summary, and one anchor missing or of another conversation is refused alike.
 */
import { expect, it } from "vitest";
import { isVerbatimError } from "verbatim-llm/core";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { readAnchorContext } from "../../packages/server/src/gateway/console/read-context.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { seedConsole } from "./seed.js";

describeEachDialect("console context read in chunks", (getDatabase) => {
  it("issue 20: gives the store's readContext, message for message", async () => {
    const seeded = await seedConsole(getDatabase(), uniqueName("subject"));
    const { weather, long, subject } = seeded;
    const anchors: [string, string][] = [
      ...[
        weather.firstUser,
        weather.call,
        weather.toolResult,
        weather.answer,
        weather.forkAnswer,
        weather.failed,
        weather.summary,
      ].map((id): [string, string] => [weather.id, id]),
      [long.id, long.last],
    ];
    for (const [conversationId, anchor] of anchors) {
      // A cold cache and a warm one.
      const store = new GatewayMessageStore(getDatabase());
      for (let pass = 0; pass < 2; pass++) {
        const chunked = await readAnchorContext(
          getDatabase(),
          store,
          subject,
          conversationId,
          anchor,
        );
        const whole = await new GatewayMessageStore(getDatabase()).readContext(subject, anchor);
        expect(chunked, anchor).toEqual(whole.messages);
      }
    }
    const long300 = await readAnchorContext(
      getDatabase(),
      new GatewayMessageStore(getDatabase()),
      subject,
      long.id,
      long.last,
    );
    expect(long300).toHaveLength(long.count);
    for (const [conversationId, anchor] of [
      [weather.id, long.last],
      [weather.id, "msg_01missingmissingmissingmiss"],
    ] as const) {
      const refused = await readAnchorContext(
        getDatabase(),
        new GatewayMessageStore(getDatabase()),
        subject,
        conversationId,
        anchor,
      ).catch((error: unknown) => error);
      expect(isVerbatimError(refused) && refused.code).toBe("resource_not_found");
    }
  });
});
