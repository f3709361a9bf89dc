/**
 * Images of stored messages for the console's thumbnails (issue 20): the image route answers
 * an image block's bytes as stored, with their content type and SHA-256, under a size cap, and
 * refuses clearly what is not an image or not held; on both databases.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";
import { seedImages, TINY_PNG, TINY_PNG_SHA256 } from "./seed-images.js";

describeEachDialect("console: image bytes", (getDatabase) => {
  let server: TestServer;
  let seeded: { conversationId: string; messageId: string };
  const path = (block: number, query = "") =>
    `/ai-gateway/conversations/${seeded.conversationId}/messages/${seeded.messageId}/blocks/${block}/image${query}`;
  beforeAll(async () => {
    server = await testServer(getDatabase());
    seeded = await seedImages(getDatabase(), uniqueName("subject"));
  });
  afterAll(async () => {
    await server.app.close();
  });

  it("B14 an image block's bytes as stored, with their content type and SHA-256", async () => {
    const reply = await server.app.inject({
      method: "GET",
      url: path(1),
      headers: server.operator,
    });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers["content-type"]).toBe("image/png");
    expect(reply.headers["x-image-sha256"]).toBe(TINY_PNG_SHA256);
    expect(reply.headers["x-content-type-options"]).toBe("nosniff");
    expect(reply.rawPayload.equals(TINY_PNG)).toBe(true);
  });

  it("B14 an image larger than max_bytes is refused naming its size", async () => {
    const reply = await server.app.inject({
      method: "GET",
      url: path(1, "?max_bytes=10"),
      headers: server.operator,
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toMatchObject({
      error: {
        code: "invalid_request",
        message: `the image is ${TINY_PNG.length} bytes, more than max_bytes (10)`,
      },
    });
  });

  it("B14 a block that is no image, an image not held, another conversation, no token: clear refusals", async () => {
    const text = await server.app.inject({ method: "GET", url: path(0), headers: server.operator });
    expect(text.statusCode).toBe(404);
    expect(text.json().error.message).toContain("a text block, not an image");
    const beyond = await server.app.inject({
      method: "GET",
      url: path(9),
      headers: server.operator,
    });
    expect(beyond.statusCode).toBe(404);
    const notHeld = await server.app.inject({
      method: "GET",
      url: path(2),
      headers: server.operator,
    });
    expect(notHeld.statusCode).toBe(404);
    expect(notHeld.json().error.message).toContain(`image ${"b".repeat(64)} are not held`);
    const other = await seedImages(getDatabase(), uniqueName("subject"));
    const crossed = await server.app.inject({
      method: "GET",
      url: `/ai-gateway/conversations/${other.conversationId}/messages/${seeded.messageId}/blocks/1/image`,
      headers: server.operator,
    });
    expect(crossed.statusCode).toBe(404);
    const anonymous = await server.app.inject({ method: "GET", url: path(1) });
    expect(anonymous.statusCode).toBe(401);
  });
});
