/**
 * Images in the Responses API (issue 17), with the `openai` SDK on both databases: an
 * `input_image` given as a data URL or as an http(s) URL (served here on loopback, a host this
 * server is told to allow with VERBATIM_IMAGE_URL_HOSTS: by default it is refused, see
 * responses-image-urls.test.ts) and images in a `function_call_output` are kept as sent
 * (content-addressed per subject in ai_gateway_images) and reach every provider, in its own
 * wire shape, in this request and in every later request of the chain (read back from the
 * store). A `file_id`, an `input_file` and
 * bytes that are no image are refused with a 400 naming the part, and nothing is written. The
 * upstreams are stub models: local servers speaking each wire format, not the providers.
 */
import { createServer, type Server } from "node:http";
import OpenAI from "openai";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../support/databases.js";
import { stubbedOpenAIClient } from "../support/responses-stubs.js";

/** A 1×1 PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/** A 1×1 GIF. */
const GIF_BASE64 = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

describeEachDialect("images in the Responses API", (getDatabase) => {
  const { stubbed, client } = stubbedOpenAIClient(getDatabase, {
    VERBATIM_IMAGE_URL_HOSTS: "127.0.0.1",
  });
  let imageServer: Server;
  let imageUrl: string;

  beforeAll(async () => {
    imageServer = createServer((request, response) => {
      if (request.url === "/pixel.gif") {
        response.writeHead(200, { "content-type": "image/gif" });
        response.end(Buffer.from(GIF_BASE64, "base64"));
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => imageServer.listen(0, "127.0.0.1", resolve));
    const address = imageServer.address();
    imageUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => imageServer.close(resolve));
  });

  const imageRows = async () => {
    const result = await sql<{ sha256: string; mime_type: string; byte_count: number }>`
      select sha256, mime_type, byte_count from ai_gateway_images
      where subject_uid = ${stubbed().subject} order by sha256`.execute(getDatabase().db);
    return result.rows.map((row) => ({ ...row, byte_count: Number(row.byte_count) }));
  };

  async function refusal(call: Promise<unknown>) {
    const error = await call.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    return error as InstanceType<typeof OpenAI.BadRequestError>;
  }

  it("a data-URL image is kept and reaches every provider, this turn and the next ones", async () => {
    const stubs = stubbed().stubs;
    stubs.anthropic.script.push({ text: "A pixel." });
    const first = await client().responses.create({
      model: "claude-images",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            {
              type: "input_image",
              image_url: `data:image/png;base64,${PNG_BASE64}`,
              detail: "auto",
            },
          ],
        },
      ],
    });
    expect(first.output_text).toBe("A pixel.");
    const sentToAnthropic = stubbed().lastSent("anthropic").messages[0].content;
    expect(sentToAnthropic[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG_BASE64 },
    });
    const rows = await imageRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ mime_type: "image/png", byte_count: 70 });
    expect(rows[0]?.sha256).toMatch(/^[0-9a-f]{64}$/);

    // Each later request of the chain renders the kept bytes to its own provider.
    let previous = first.id;
    for (const [model, provider] of [
      ["gpt-images", "openai-responses"],
      ["gemini-images", "gemini"],
      ["chat-images", "openrouter"],
    ] as const) {
      stubs[provider].script.push({ text: `Seen by ${provider}.` });
      const next = await client().responses.create({
        model,
        previous_response_id: previous,
        input: "And now?",
      });
      expect(next.output_text).toBe(`Seen by ${provider}.`);
      const sent = JSON.stringify(stubbed().lastSent(provider));
      expect(sent, provider).toContain(PNG_BASE64);
      previous = next.id;
    }
    expect(JSON.stringify(stubbed().lastSent("gemini").contents[0].parts[1])).toBe(
      JSON.stringify({ inlineData: { mimeType: "image/png", data: PNG_BASE64 } }),
    );
    // Sent again, the same bytes are not kept twice.
    stubs.anthropic.script.push({ text: "Again." });
    await client().responses.create({
      model: "claude-images",
      input: [
        {
          role: "user",
          content: [
            {
              type: "input_image",
              image_url: `data:image/png;base64,${PNG_BASE64}`,
              detail: "low",
            },
          ],
        },
      ],
    });
    expect(await imageRows()).toHaveLength(1);
  });

  it("an http(s) image URL is fetched once by the server and its bytes kept", async () => {
    stubbed().stubs["openai-responses"].script.push({ text: "A GIF." });
    const before = (await imageRows()).length;
    await client().responses.create({
      model: "gpt-images",
      input: [
        {
          role: "user",
          content: [{ type: "input_image", image_url: `${imageUrl}/pixel.gif`, detail: "auto" }],
        },
      ],
    });
    const input = stubbed().lastSent("openai-responses").input;
    expect(input[0].content[0]).toEqual({
      type: "input_image",
      image_url: `data:image/gif;base64,${GIF_BASE64}`,
      detail: "auto",
    });
    const rows = await imageRows();
    expect(rows).toHaveLength(before + 1);
    expect(rows.map((row) => row.mime_type)).toContain("image/gif");
  });

  it("a tool output with text and an image: the result and then the image reach the model", async () => {
    stubbed().stubs.anthropic.script.push(
      { toolCalls: [{ id: "toolu_shot", name: "screenshot", arguments: "{}" }] },
      { text: "I see a pixel." },
    );
    const tools = [
      {
        type: "function" as const,
        name: "screenshot",
        parameters: { type: "object" },
        strict: false,
      },
    ];
    const call = await client().responses.create({ model: "claude-images", input: "Look", tools });
    const functionCall = call.output.find((item) => item.type === "function_call");
    expect(functionCall?.type).toBe("function_call");
    const answer = await client().responses.create({
      model: "claude-images",
      previous_response_id: call.id,
      tools,
      input: [
        {
          type: "function_call_output",
          call_id: functionCall?.type === "function_call" ? functionCall.call_id : "",
          output: [
            { type: "input_text", text: "the screen:" },
            {
              type: "input_image",
              image_url: `data:image/png;base64,${PNG_BASE64}`,
              detail: "auto",
            },
          ],
        },
      ],
    });
    expect(answer.output_text).toBe("I see a pixel.");
    const last = stubbed().lastSent("anthropic").messages.at(-1);
    expect(last.role).toBe("user");
    expect(last.content[0]).toMatchObject({ type: "tool_result", content: "the screen:" });
    expect(last.content[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG_BASE64 },
    });
  });

  it("input_items and the conversation's items give the image back as the input_image it was sent as", async () => {
    stubbed().stubs.anthropic.script.push(
      { toolCalls: [{ id: "toolu_items", name: "screenshot", arguments: "{}" }] },
      { text: "Both seen." },
    );
    const dataUrl = `data:image/png;base64,${PNG_BASE64}`;
    const tools = [
      {
        type: "function" as const,
        name: "screenshot",
        parameters: { type: "object" },
        strict: false,
      },
    ];
    const first = await client().responses.create({
      model: "claude-images",
      tools,
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Compare" },
            { type: "input_image", image_url: dataUrl, detail: "auto" },
          ],
        },
      ],
    });
    const call = first.output.find((item) => item.type === "function_call");
    const second = await client().responses.create({
      model: "claude-images",
      previous_response_id: first.id,
      tools,
      input: [
        {
          type: "function_call_output",
          call_id: call?.type === "function_call" ? call.call_id : "",
          output: [{ type: "input_image", image_url: dataUrl, detail: "auto" }],
        },
      ],
    });
    const firstItems = await client().responses.inputItems.list(first.id);
    expect(firstItems.data[0]).toMatchObject({
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "Compare" },
        { type: "input_image", image_url: dataUrl },
      ],
    });
    const secondItems = await client().responses.inputItems.list(second.id);
    expect(secondItems.data[0]).toMatchObject({
      type: "function_call_output",
      output: [{ type: "input_image", image_url: dataUrl }],
    });
    const stored = await stubbed().get(`/responses/${second.id}`);
    const items = await client().conversations.items.list(stored.body.conversation_id, {
      order: "asc",
    });
    expect(JSON.stringify(items.data)).toContain(dataUrl);
  });

  it("conversation items created with an image keep it, and a response continuing sends it", async () => {
    const conversation = await client().conversations.create({
      items: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Remember this picture" },
            {
              type: "input_image",
              image_url: `data:image/gif;base64,${GIF_BASE64}`,
              detail: "auto",
            },
          ],
        },
      ],
    });
    const listed = await client().conversations.items.list(conversation.id);
    expect(JSON.stringify(listed.data)).toContain(`data:image/gif;base64,${GIF_BASE64}`);
    stubbed().stubs.anthropic.script.push({ text: "A GIF pixel." });
    await client().responses.create({
      model: "claude-images",
      conversation: conversation.id,
      input: "What was it?",
    });
    expect(JSON.stringify(stubbed().lastSent("anthropic").messages[0])).toContain(GIF_BASE64);
  });

  it("file_id, input_file, a non-image and an unreachable URL are refused naming the part; nothing is written", async () => {
    const rowsBefore = await stubbed().rowCount();
    const imagesBefore = (await imageRows()).length;
    const cases: [unknown, string, string][] = [
      [
        { type: "input_image", file_id: "file-abc", detail: "auto" },
        "input[0].content[0].file_id",
        "Files API",
      ],
      [
        {
          type: "input_file",
          file_data: "data:application/pdf;base64,JVBERi0=",
          filename: "a.pdf",
        },
        "input[0].content[0]",
        "input_file",
      ],
      [
        { type: "input_image", image_url: "data:image/png;base64,aGVsbG8=", detail: "auto" },
        "input[0].content[0].image_url",
        "not a PNG",
      ],
      [
        { type: "input_image", image_url: `${imageUrl}/missing.png`, detail: "auto" },
        "input[0].content[0].image_url",
        "answered 404",
      ],
    ];
    for (const [part, param, words] of cases) {
      const error = await refusal(
        client().responses.create({
          model: "claude-images",
          input: [{ role: "user", content: [part] }] as OpenAI.Responses.ResponseInput,
        }),
      );
      expect(error.param, JSON.stringify(part)).toBe(param);
      expect(error.message).toContain(words);
    }
    expect(await stubbed().rowCount()).toBe(rowsBefore);
    expect(await imageRows()).toHaveLength(imagesBefore);
  });
});
