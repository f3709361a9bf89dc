/**
 * Compressing a chain that shows an image (issue 17): the model that writes the summary is
 * shown the image, its bytes read from the subject's kept images, on both databases. The
 * upstream is a stub model: a local server speaking the Anthropic wire format, not Anthropic.
 */
import { expect, it } from "vitest";
import { describeEachDialect } from "../support/databases.js";
import { stubbedOpenAIClient } from "../support/responses-stubs.js";

/** A 1×1 PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describeEachDialect("compressing a chain with an image", (getDatabase) => {
  const { stubbed, client } = stubbedOpenAIClient(getDatabase);

  it("the summarizing model is shown the kept image", async () => {
    const anthropic = stubbed().stubs.anthropic;
    anthropic.script.push({ text: "A pixel." }, { text: "The user showed a one-pixel image." });
    const response = await client().responses.create({
      model: "claude-compress",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Look" },
            {
              type: "input_image",
              image_url: `data:image/png;base64,${PNG_BASE64}`,
              detail: "auto",
            },
          ],
        },
      ],
    });
    const reply = await stubbed().post(`/responses/${response.id}/compress`, {
      model: "claude-compress",
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.summary).toBe("The user showed a one-pixel image.");
    const sent = stubbed().lastSent("anthropic");
    expect(sent.messages[0].content[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG_BASE64 },
    });
  });
});
