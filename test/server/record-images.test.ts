/**
 * Issue 18: images in the history of a recorded call (/v1/messages, /v1/chat/completions) are
 * kept as real images, content-addressed in the subject's image store as /v1/responses keeps an
 * `input_image`: the Conversations API gives them back as `input_image` data URLs, the console's
 * image route serves their bytes and `verbatim export --from <database>` writes them. The same
 * image sent in every request of a session is one row. An image named by URL is not fetched
 * (the recorded path passes requests through): it stays `imageOmitted`, its URL noted in the
 * message's gateway facts. Matching is unchanged: each call continues the one before. With the
 * official `@anthropic-ai/sdk` and `openai` clients, on SQLite and PostgreSQL.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { uniqueName } from "../support/databases.js";
import { startRawUpstreamServer, type RawUpstreamServer } from "../support/raw-upstream-server.js";
import { describeDatabaseTargets } from "../interop/database-targets.js";
import { callsPlaced } from "../support/recorded-calls.js";

/** A 1×1 PNG (70 bytes). */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/** A 1×1 GIF (42 bytes). */
const GIF_BASE64 = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
const CAT_URL = "https://images.example/cat.jpg?size=large";

interface Part {
  readonly type: string;
  readonly text?: string;
  readonly image_url?: string | null;
}
interface Item {
  readonly type: string;
  readonly role?: string;
  readonly content?: Part[];
  readonly output?: string | Part[];
}

describeDatabaseTargets("recorded calls keep their images", (target) => {
  let started: RawUpstreamServer;

  beforeAll(async () => {
    started = await startRawUpstreamServer(target.database);
  });
  afterAll(async () => {
    await started.close();
  });

  async function get(path: string, authorization: string): Promise<Response> {
    const response = await fetch(`${started.baseUrl}${path}`, { headers: { authorization } });
    expect(response.status, path).toBe(200);
    return response;
  }

  /** The subject's one recorded conversation, its calls' matched counts, and its items. */
  async function recorded(subject: string, key: string, count: number) {
    await callsPlaced(target.database, subject, count);
    const calls = await target.database.db
      .selectFrom("ai_gateway_recorded_calls")
      .select(["conversation_id", "matched_count"])
      .where("subject_uid", "=", subject)
      .orderBy("created_at")
      .execute();
    expect(new Set(calls.map((call) => call.conversation_id)).size).toBe(1);
    const id = calls[0]?.conversation_id ?? "";
    const list = (await (
      await get(`/v1/conversations/${id}/items?order=asc&limit=100`, `Bearer ${key}`)
    ).json()) as { data: Item[] };
    return { id, matched: calls.map((call) => call.matched_count), items: list.data };
  }

  async function imageRows(subject: string) {
    const rows = await target.database.db
      .selectFrom("ai_gateway_images")
      .select(["mime_type", "byte_count"])
      .where("subject_uid", "=", subject)
      .orderBy("mime_type")
      .execute();
    return rows.map((row) => `${row.mime_type}:${Number(row.byte_count)}`);
  }

  async function gatewayFacts(subject: string): Promise<unknown[]> {
    const rows = await target.database.db
      .selectFrom("ai_gateway_messages")
      .select("metadata")
      .where("subject_uid", "=", subject)
      .orderBy("depth")
      .execute();
    return rows.map((row) => (JSON.parse(String(row.metadata)) as { gateway: unknown }).gateway);
  }

  const pngUrl = `data:image/png;base64,${PNG_BASE64}`;
  const gifUrl = `data:image/gif;base64,${GIF_BASE64}`;

  it("Anthropic Messages: base64 images (in a user message and in a tool result) kept once each, shown by the items, the console and the export; a URL image noted, not fetched", async () => {
    const subject = uniqueName("record-images");
    const { key } = await started.server.apiKeyFor(subject);
    const client = new Anthropic({ apiKey: key, baseURL: started.baseUrl, maxRetries: 0 });
    const png = {
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG_BASE64 },
    } as const;
    const history: Anthropic.MessageParam[] = [
      { role: "user", content: [{ type: "text", text: "What is this?" }, png] },
    ];
    const first = await client.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: history,
    });
    // The next request repeats the whole history (the image again) and sends the same image
    // once more, beside one named by URL.
    history.push(
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [
          png,
          { type: "image", source: { type: "url", url: CAT_URL } },
          { type: "text", text: "And these?" },
        ],
      },
    );
    const tools: Anthropic.Tool[] = [
      { name: "Bash", description: "run", input_schema: { type: "object", properties: {} } },
    ];
    started.upstream.bashCommand = "screenshot";
    const call = await client.messages
      .stream({ model: "claude-test", max_tokens: 100, messages: history, tools })
      .finalMessage();
    started.upstream.bashCommand = undefined;
    const toolUse = call.content.find((block) => block.type === "tool_use");
    history.push(
      { role: "assistant", content: call.content },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: toolUse?.id ?? "",
            content: [
              { type: "text", text: "the screen" },
              {
                type: "image",
                source: { type: "base64", media_type: "image/gif", data: GIF_BASE64 },
              },
            ],
          },
        ],
      },
    );
    await client.messages.create({
      model: "claude-test",
      max_tokens: 100,
      messages: history,
      tools,
    });

    const { id, matched, items } = await recorded(subject, key, 3);
    // Matching as before: each call continues the one before (the image's bytes hash alike).
    expect(matched).toEqual([0, 1, 3]);
    // Two images sent four times in all: one row each.
    expect(await imageRows(subject)).toEqual(["image/gif:42", "image/png:70"]);
    expect(items.map((item) => `${item.type}:${item.role ?? ""}`)).toEqual([
      "message:user",
      "message:assistant",
      "message:user",
      "function_call:",
      "function_call_output:",
      "message:assistant",
    ]);
    expect(items[0]?.content).toEqual([
      { type: "input_text", text: "What is this?" },
      { type: "input_image", image_url: pngUrl, detail: "auto" },
    ]);
    // The URL image is a placeholder (its type from the file name); the text is kept.
    expect(items[2]?.content).toEqual([
      { type: "input_text", text: "And these?" },
      { type: "input_image", image_url: pngUrl, detail: "auto" },
    ]);
    expect(items[4]?.output).toEqual([
      { type: "input_text", text: "the screen" },
      { type: "input_image", image_url: gifUrl, detail: "auto" },
    ]);
    const facts = await gatewayFacts(subject);
    expect(facts[2]).toEqual({ imageUrls: { "1": CAT_URL } });

    // The console lists the blocks and serves an image's bytes.
    const consoleView = (await (
      await get(`/ai-gateway/conversations/${id}/messages`, started.server.operator.authorization)
    ).json()) as { data?: unknown };
    const text = JSON.stringify(consoleView);
    expect(text).toContain('"type":"imageOmitted","mimeType":"image/jpeg"');
    const firstMessage = /"id":"(msg_[^"]+)"/.exec(text)?.[1] ?? "";
    const image = await get(
      `/ai-gateway/conversations/${id}/messages/${firstMessage}/blocks/1/image`,
      started.server.operator.authorization,
    );
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await image.arrayBuffer()).toString("base64")).toBe(PNG_BASE64);

    // The export writes the images as data URLs.
    const exported = await target.run([
      "export",
      "--from",
      target.target,
      "--subject",
      subject,
      "--conversation",
      id,
      "--to",
      "openai-jsonl",
    ]);
    expect(exported.code, exported.err).toBe(0);
    expect(exported.out).toContain(pngUrl);
    expect(exported.out).toContain(gifUrl);
  });

  it("Chat Completions: a data-URL image kept once however often it is sent; an http URL noted, not fetched", async () => {
    const subject = uniqueName("record-chat-images");
    const { key } = await started.server.apiKeyFor(subject);
    const client = new OpenAI({ apiKey: key, baseURL: `${started.baseUrl}/v1`, maxRetries: 0 });
    const image = { type: "image_url", image_url: { url: pngUrl, detail: "low" } } as const;
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "user", content: [{ type: "text", text: "Look" }, image] },
    ];
    const first = await client.chat.completions.create({ model: "gpt-test", messages });
    messages.push(
      { role: "assistant", content: first.choices[0]?.message.content ?? "" },
      {
        role: "user",
        content: [image, { type: "image_url", image_url: { url: "http://images.example/x" } }],
      },
    );
    const stream = await client.chat.completions.create({
      model: "gpt-test",
      messages,
      stream: true,
    });
    for await (const chunk of stream) expect(chunk.object).toBe("chat.completion.chunk");

    const { matched, items } = await recorded(subject, key, 2);
    expect(matched).toEqual([0, 1]);
    expect(await imageRows(subject)).toEqual(["image/png:70"]);
    expect(items[0]?.content).toEqual([
      { type: "input_text", text: "Look" },
      { type: "input_image", image_url: pngUrl, detail: "auto" },
    ]);
    expect(items[2]?.content).toEqual([{ type: "input_image", image_url: pngUrl, detail: "auto" }]);
    expect((await gatewayFacts(subject))[2]).toEqual({
      imageUrls: { "1": "http://images.example/x" },
    });
  });
});
