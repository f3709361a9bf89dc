import { expect, it } from "vitest";
import { VerbatimError } from "verbatim-llm/core";
import { describeEachDialect, uniqueName } from "../../../../../test/support/databases.js";
import { parseResponse } from "verbatim-llm/providers";
import { GatewayMessageStore, type AppendMessageInput } from "./message-store.js";
import { gatewayFactsFromRound } from "./round-facts.js";

/**
 * An Anthropic Messages API response that calls a tool, written in the response shape of
 * Anthropic's Messages API reference (content blocks `text` and `tool_use`, `usage` with cache
 * counts). Parsed by the real Anthropic parser of src/providers.
 */
const anthropicToolResponse = JSON.stringify({
  id: "msg_01XFDUDYJgAACzvnptvVoYEL",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [
    { type: "text", text: "Let me check the weather." },
    {
      type: "tool_use",
      id: "toolu_01A09q90qw90lq917835lq9",
      name: "get_weather",
      input: { location: "San Francisco, CA" },
    },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: {
    input_tokens: 472,
    output_tokens: 91,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 1024,
  },
});

/** Every array and every key anywhere in a JSON value. */
function shapeOf(value: unknown, path = "$"): { arrays: string[]; keys: string[] } {
  const arrays: string[] = [];
  const keys: string[] = [];
  const walk = (node: unknown, at: string) => {
    if (Array.isArray(node)) {
      arrays.push(at);
      node.forEach((item, index) => walk(item, `${at}[${index}]`));
    } else if (typeof node === "object" && node !== null) {
      for (const [key, item] of Object.entries(node)) {
        keys.push(key);
        walk(item, `${at}.${key}`);
      }
    }
  };
  walk(value, path);
  return { arrays, keys };
}

describeEachDialect("gateway metadata", (getDatabase) => {
  const store = () => new GatewayMessageStore(getDatabase());

  it("B5 after a response that used tools, stored metadata holds no list of items and no raw body", async () => {
    const subject = uniqueName("subject");
    const round = parseResponse("anthropic", anthropicToolResponse, "claude-sonnet-4-5");
    expect(round.message.content.some((block) => block.type === "toolCall")).toBe(true);
    const [user] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "Weather in SF?" }] }],
    });
    const turn: AppendMessageInput[] = [
      {
        role: "assistant",
        content: round.message.content,
        metadata: { request_id: "req-1", user: "alice" },
        gateway: gatewayFactsFromRound(round),
      },
      {
        role: "tool",
        content: [
          {
            type: "toolResult",
            callID: "toolu_01A09q90qw90lq917835lq9",
            toolName: "get_weather",
            isError: false,
            content: '{"temperature_f": 64}',
          },
        ],
      },
    ];
    const stored = await store().appendMessages(subject, {
      previousMessageId: user?.id ?? "",
      messages: turn,
    });
    const rows = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select(["id", "metadata", "content"])
      .where("conversation_id", "=", user?.conversationId ?? "")
      .execute();
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const metadata = JSON.parse(row.metadata) as unknown;
      const { arrays, keys } = shapeOf(metadata);
      expect(arrays, `arrays in metadata of ${row.id}`).toEqual([]);
      for (const key of ["content", "items", "messages", "raw", "body", "response"]) {
        expect(keys).not.toContain(key);
      }
      const parsed = metadata as { caller: object; gateway: object };
      expect(Object.keys(parsed).sort()).toEqual(["caller", "gateway"]);
      for (const key of Object.keys(parsed.gateway)) {
        expect(["model", "provider", "providerResponseId", "usage", "stopReason"]).toContain(key);
      }
      expect(row.metadata).not.toContain("toolu_01A09q90qw90lq917835lq9");
      expect(row.metadata).not.toContain("San Francisco");
      expect(row.metadata).not.toContain("Let me check");
    }
    const assistantRow = rows.find((row) => row.id === stored[0]?.id);
    expect(JSON.parse(assistantRow?.metadata ?? "")).toEqual({
      caller: { request_id: "req-1", user: "alice" },
      gateway: {
        model: "claude-sonnet-4-5-20250929",
        provider: "anthropic",
        providerResponseId: "msg_01XFDUDYJgAACzvnptvVoYEL",
        usage: { input: 472, output: 91, cacheRead: 1024, cacheWrite: 0, webSearchRequests: 0 },
        stopReason: "tool_use",
      },
    });
    // the tool call lives in content, as blocks of the message model
    expect(JSON.parse(assistantRow?.content ?? "")).toEqual(round.message.content);
  });

  it("B5 caller metadata is a few bounded string pairs; a list of items is refused", async () => {
    const subject = uniqueName("subject");
    const attempt = (metadata: unknown) =>
      store()
        .appendMessages(subject, {
          previousMessageId: null,
          messages: [{ role: "user", content: [], metadata } as AppendMessageInput],
        })
        .then(
          () => undefined,
          (error: unknown) => error as VerbatimError,
        );
    const items = [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }];
    const list = await attempt({ items });
    expect(list?.code).toBe("gateway_metadata_invalid");
    expect(list?.message).toContain("list");
    expect(list?.where).toBe("messages[0].metadata.items");
    for (const bad of [
      items,
      { nested: { a: "b" } },
      { count: 3 },
      "text",
      Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, "v"])),
      { ["k".repeat(65)]: "v" },
      { key: "v".repeat(513) },
      { "": "v" },
    ]) {
      expect((await attempt(bad))?.code, JSON.stringify(bad).slice(0, 60)).toBe(
        "gateway_metadata_invalid",
      );
    }
    const fine = Object.fromEntries(
      Array.from({ length: 16 }, (_, index) => [`k${index}`, "v".repeat(512)]),
    );
    expect(await attempt(fine)).toBeUndefined();
  });

  it("B5 gateway facts are a closed set: an extra key such as a list of output items is refused", async () => {
    const subject = uniqueName("subject");
    for (const gateway of [
      { model: "m", output: [{ type: "message" }] },
      { rawResponse: "{...}" },
      {
        usage: {
          input: 1,
          output: 2,
          cacheRead: 0,
          cacheWrite: 0,
          webSearchRequests: 0,
          items: [],
        },
      },
      { model: ["m"] },
    ]) {
      const error = await store()
        .appendMessages(subject, {
          previousMessageId: null,
          messages: [{ role: "assistant", content: [], gateway } as AppendMessageInput],
        })
        .then(
          () => undefined,
          (caught: unknown) => caught as VerbatimError,
        );
      expect(error?.code, JSON.stringify(gateway)).toBe("gateway_metadata_invalid");
      expect(error?.where).toMatch(/^messages\[0\]\.gateway/);
    }
    const rows = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("id")
      .where("subject_uid", "=", subject)
      .execute();
    expect(rows).toEqual([]);
  });
});

describeEachDialect("gateway request settings", (getDatabase) => {
  const store = () => new GatewayMessageStore(getDatabase(), { limits: { maxContentBytes: 4096 } });
  const count = async () =>
    (await getDatabase().db.selectFrom("ai_gateway_messages").select("id").execute()).length;
  const tool = {
    type: "function",
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  };

  it("B5 a response's request settings are kept apart from its metadata and given back", async () => {
    const subject = uniqueName("subject");
    const [user, answer] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather?" }] },
        {
          role: "assistant",
          content: [],
          status: "in_progress",
          gateway: { model: "m" },
          request: { instructions: "Be brief.", tools: [tool], maxOutputTokens: 300 },
        },
      ],
    });
    expect(await store().getRequestSettings(subject, answer?.id ?? "")).toEqual({
      instructions: "Be brief.",
      tools: [tool],
      maxOutputTokens: 300,
    });
    expect(await store().getRequestSettings(subject, user?.id ?? "")).toBeNull();
    // Not in the metadata, which stays free of lists (B5).
    const row = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select(["metadata"])
      .where("id", "=", answer?.id ?? "")
      .executeTakeFirstOrThrow();
    expect(String(row.metadata)).not.toContain("get_weather");
    // Another subject's message is missing, as everywhere.
    await expect(
      store().getRequestSettings(uniqueName("other"), answer?.id ?? ""),
    ).rejects.toMatchObject({ code: "gateway_message_not_found" });
  });

  it("B5 settings of a wrong shape or too large are refused with where; nothing is written", async () => {
    const subject = uniqueName("subject");
    const before = await count();
    const cases: [unknown, string, string][] = [
      [
        { instructions: 7, tools: [], maxOutputTokens: null },
        "gateway_input_invalid",
        "messages[0].request.instructions",
      ],
      [
        { instructions: null, tools: ["not an object"], maxOutputTokens: null },
        "gateway_input_invalid",
        "messages[0].request.tools[0]",
      ],
      [
        { instructions: null, tools: [], maxOutputTokens: 0 },
        "gateway_input_invalid",
        "messages[0].request.maxOutputTokens",
      ],
      [
        { instructions: null, tools: [], maxOutputTokens: null, extra: 1 },
        "gateway_input_invalid",
        "messages[0].request",
      ],
      [
        { instructions: "\ud800", tools: [], maxOutputTokens: null },
        "gateway_input_invalid",
        "messages[0].request.instructions",
      ],
      [
        { instructions: "x".repeat(5000), tools: [], maxOutputTokens: null },
        "gateway_content_too_large",
        "messages[0].request",
      ],
    ];
    for (const [request, code, where] of cases) {
      await expect(
        store().appendMessages(subject, {
          previousMessageId: null,
          messages: [{ role: "assistant", content: [], request } as AppendMessageInput],
        }),
      ).rejects.toMatchObject({ code, where });
    }
    expect(await count()).toBe(before);
  });

  it("B3 stored settings changed outside the store are reported, not passed on", async () => {
    const subject = uniqueName("subject");
    const [answer] = await store().appendMessages(subject, {
      previousMessageId: null,
      messages: [
        {
          role: "assistant",
          content: [{ type: "text", text: "hi" }],
          request: { instructions: null, tools: [], maxOutputTokens: null },
        },
      ],
    });
    await getDatabase()
      .db.updateTable("ai_gateway_messages")
      .set({ request: '{"instructions":null,"tools":"nope","maxOutputTokens":null}' })
      .where("id", "=", answer?.id ?? "")
      .execute();
    await expect(store().getRequestSettings(subject, answer?.id ?? "")).rejects.toMatchObject({
      code: "store_row_invalid",
    });
  });
});
