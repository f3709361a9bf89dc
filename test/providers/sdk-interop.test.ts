/**
 * Interop with the official clients: verbatim's rendered body goes through `@anthropic-ai/sdk`
 * and `openai` (their raw-body path) to a local server speaking the provider's wire format
 * (test/support/provider-servers/, after the captured bodies of test/fixtures/providers/), and
 * the bytes that arrive are verbatim's, byte for byte. The SDK's own JSON serialisation of the
 * same body, for contrast, does not keep the tool arguments' bytes.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import type { Message } from "../../packages/library/src/history/index.js";
import {
  createStreamParser,
  renderRequest,
  type ProviderId,
} from "../../packages/library/src/providers/index.js";
import { SseDecoder } from "../../packages/library/src/internal/index.js";
import { startLocalProvider, type ProviderServer } from "../support/provider-servers/index.js";

const history: Message[] = [
  { role: "user", content: [{ type: "text", text: "Read the card 日本語 🎴" }] },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Reading." },
      {
        type: "toolCall",
        id: "toolu_1",
        name: "read_file",
        arguments: '{"path":  "カード.txt", "2": 1, "1": 2}',
      },
    ],
  },
  {
    role: "tool",
    content: [
      {
        type: "toolResult",
        callID: "toolu_1",
        toolName: "read_file",
        isError: false,
        contentBase64: "/w==",
      },
    ],
  },
];

function rendered(provider: ProviderId): string {
  return renderRequest(provider, {
    history,
    images: () => undefined,
    options: {
      model: "m",
      maxTokens: 100,
      tools: [{ name: "read_file", description: "Read", inputSchema: { type: "object" } }],
    },
  }).body;
}

const servers: ProviderServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

async function parseResponse(provider: ProviderId, response: Response) {
  const decoder = new SseDecoder();
  const parser = createStreamParser(provider, "m");
  for (const event of [
    ...decoder.push(new Uint8Array(await response.arrayBuffer())),
    ...decoder.end(),
  ])
    parser.push(event);
  return parser.finish();
}

describe("official SDK interop", () => {
  it("A26 @anthropic-ai/sdk delivers verbatim's body byte for byte", async () => {
    const server = await startLocalProvider("anthropic");
    servers.push(server);
    const body = rendered("anthropic");
    const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: server.baseUrl, maxRetries: 0 });
    const response = await client
      .post("/v1/messages", {
        body: Buffer.from(body, "utf8"),
        headers: { "content-type": "application/json" },
        stream: true,
      })
      .asResponse();
    expect(server.requests[0]!.body.equals(Buffer.from(body, "utf8"))).toBe(true);
    expect((await parseResponse("anthropic", response)).message.content).toEqual([
      { type: "text", text: "ok" },
    ]);

    // For contrast: the SDK's typed path re-serialises, and the arguments' bytes are lost.
    await client.messages
      .create(JSON.parse(body) as Anthropic.MessageCreateParamsNonStreaming)
      .catch(() => undefined);
    expect(server.requests[1]!.body.toString("utf8")).not.toContain(
      '{"path":  "カード.txt", "2": 1, "1": 2}',
    );
    expect(body).toContain('"input":{"path":  "カード.txt", "2": 1, "1": 2}');
  });

  it.each(["openai-chat", "openai-responses", "openrouter"] as const)(
    "A26 openai SDK delivers verbatim's %s body byte for byte",
    async (provider) => {
      const server = await startLocalProvider(provider);
      servers.push(server);
      const body = rendered(provider);
      const client = new OpenAI({ apiKey: "sk-test", baseURL: server.baseUrl, maxRetries: 0 });
      const path = provider === "openai-responses" ? "/responses" : "/chat/completions";
      const response = await client
        .post(path, {
          body: Buffer.from(body, "utf8"),
          headers: { "content-type": "application/json" },
          stream: true,
        })
        .asResponse();
      expect(server.requests[0]!.body.equals(Buffer.from(body, "utf8"))).toBe(true);
      expect(server.requests[0]!.url).toBe(
        provider === "openrouter" ? `/api/v1${path}` : `/v1${path}`,
      );
      expect((await parseResponse(provider, response)).message.content).toEqual([
        { type: "text", text: "ok" },
      ]);
    },
  );
});
