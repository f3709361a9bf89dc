/**
 * Issue 18: `/v1/responses` without `previous_response_id` (a client that sends its whole
 * history, e.g. Codex with `store: false`) keeps the images of its input as real images too:
 * the session is one conversation, the `input_image` the client sends again in every request is
 * matched by its bytes' SHA-256 and kept once, and the conversation's items give it back as a
 * data URL. With the `openai` SDK against a stub model, on SQLite and PostgreSQL.
 */
import type OpenAI from "openai";
import { expect, it } from "vitest";
import { describeEachDialect } from "../support/databases.js";
import { stubbedOpenAIClient } from "../support/responses-stubs.js";

/** A 1×1 PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describeEachDialect("images of /v1/responses chains", (getDatabase) => {
  const { stubbed, client } = stubbedOpenAIClient(getDatabase);

  it("an input_image sent in every request of a session is one image of one conversation", async () => {
    const image = `data:image/png;base64,${PNG_BASE64}`;
    const input: OpenAI.Responses.ResponseInputItem[] = [
      {
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: image, detail: "auto" },
        ],
      },
    ];
    const stubs = stubbed().stubs;
    stubs["openai-responses"].script.push({ text: "A pixel." }, { text: "Still a pixel." });
    const first = await client().responses.create({ model: "gpt-images", input, store: false });
    input.push(
      { role: "assistant", content: first.output_text },
      {
        role: "user",
        content: [
          { type: "input_image", image_url: image, detail: "low" },
          { type: "input_text", text: "And again?" },
        ],
      },
    );
    await client().responses.create({ model: "gpt-images", input, store: false });
    const db = getDatabase().db;
    const subject = stubbed().subject;
    const images = await db
      .selectFrom("ai_gateway_images")
      .select("sha256")
      .where("subject_uid", "=", subject)
      .execute();
    expect(images).toHaveLength(1);
    const conversations = await db
      .selectFrom("ai_gateway_messages")
      .select("conversation_id")
      .where("subject_uid", "=", subject)
      .groupBy("conversation_id")
      .execute();
    expect(conversations).toHaveLength(1);
    const listed = await stubbed().get(
      `/conversations/${conversations[0]?.conversation_id ?? ""}/items?order=asc&limit=20`,
    );
    expect(listed.status).toBe(200);
    const contents = (listed.body.data as { role?: string; content?: unknown[] }[])
      .filter((item) => item.role === "user")
      .map((item) => item.content);
    expect(contents).toEqual([
      [
        { type: "input_text", text: "What is this?" },
        { type: "input_image", image_url: image, detail: "auto" },
      ],
      [
        { type: "input_text", text: "And again?" },
        { type: "input_image", image_url: image, detail: "auto" },
      ],
    ]);
  });
});
