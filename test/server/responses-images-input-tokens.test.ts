/**
 * POST /v1/responses/input_tokens with images (issue 17), on both databases: a chain that
 * shows a kept image, and an input_image in the request itself, are counted with the image's
 * bytes rendered as a response would send them (here the estimate of a provider without a
 * count endpoint, the Chat format) instead of failing for bytes not held. The upstreams are
 * stub models: local servers speaking each wire format, not the providers.
 */
import { expect, it } from "vitest";
import { describeEachDialect } from "../support/databases.js";
import { stubbedOpenAIClient } from "../support/responses-stubs.js";

/** A 1×1 PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const image = {
  type: "input_image" as const,
  image_url: `data:image/png;base64,${PNG_BASE64}`,
  detail: "auto" as const,
};

describeEachDialect("input_tokens with images", (getDatabase) => {
  const { stubbed, client } = stubbedOpenAIClient(getDatabase);

  it("counts a chain that shows a kept image, and an image of the input", async () => {
    stubbed().stubs.openrouter.script.push({ text: "A pixel." });
    const response = await client().responses.create({
      model: "chat-count",
      input: [{ role: "user", content: [{ type: "input_text", text: "Look" }, image] }],
    });
    const plain = await stubbed().post("/responses/input_tokens", {
      model: "chat-count",
      input: "Look",
    });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    const chained = await stubbed().post("/responses/input_tokens", {
      model: "chat-count",
      previous_response_id: response.id,
      input: "And now?",
    });
    expect(chained.status, JSON.stringify(chained.body)).toBe(200);
    expect(chained.body).toMatchObject({ verbatim_count: "estimate" });
    // The image's base64 is part of what was counted.
    expect(chained.body.input_tokens - plain.body.input_tokens).toBeGreaterThan(
      PNG_BASE64.length / 4,
    );
    const direct = await stubbed().post("/responses/input_tokens", {
      model: "chat-count",
      input: [{ role: "user", content: [image] }],
    });
    expect(direct.status, JSON.stringify(direct.body)).toBe(200);
    expect(direct.body.input_tokens).toBeGreaterThan(PNG_BASE64.length / 4);
  });
});
