/**
 * What a live conversation keeps of real provider streams (issue 19): citations reach the
 * assistant panel item (format 1's `citations`) and survive saving and reopening; an image the
 * model generated enters the history with its bytes, so the next request renders and the
 * package stores the image. A loopback HTTP server replays the real captures of
 * test/fixtures/interop/providers/ (`*.chunks.txt`: one SSE data payload per line).
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { openLiveConversation } from "../../packages/library/src/conversation/open.js";
import {
  bodyJson,
  startProviderServer,
  type ProviderServer,
} from "../support/provider-servers/harness.js";
import { emptyPackage, localBackend } from "../support/live-package.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A server answering every request with the SSE form of a recorded chunks file. */
async function replaying(path: string, basePath: string): Promise<ProviderServer> {
  const lines = readFileSync(
    new URL(`../fixtures/interop/providers/${path}`, import.meta.url),
    "utf8",
  )
    .split("\n")
    .filter((line) => line.trim() !== "");
  const server = await startProviderServer({
    basePath,
    modelOf: (request) => String(bodyJson(request)["model"]),
    streamOf: () => true,
    write: () => ({
      contentType: "text/event-stream",
      body: lines.map((line) => `data: ${line}\n\n`).join(""),
    }),
  });
  cleanups.push(() => server.close());
  return server;
}

const packageFolder = () => emptyPackage(cleanups, "verbatim-real-fidelity-");
const backend = localBackend;

describe("a live conversation keeps what real streams hold", () => {
  it("Anthropic citations reach the assistant panel item and are saved with it (format 1 citations)", async () => {
    const pkg = await packageFolder();
    const server = await replaying("anthropic/web-search-citations.chunks.txt", "");
    const opened = await openLiveConversation(pkg, {
      backend: backend("anthropic", server.baseUrl),
    });
    opened.conversation.send("What happened in tech today?");
    await opened.conversation.whenIdle();
    await opened.save();
    const cited = opened.conversation
      .snapshot()
      .items.filter((item) => item.type === "assistant" && item.citations !== undefined);
    expect(cited.length).toBeGreaterThan(0);
    expect(cited[0]?.citations?.[0]?.url).toMatch(/^https:\/\//);

    const reopened = await openLiveConversation(pkg, {
      backend: backend("anthropic", server.baseUrl),
    });
    const saved = reopened.conversation
      .snapshot()
      .items.filter((item) => item.type === "assistant" && item.citations !== undefined);
    expect(saved).toEqual(cited);
  });

  it("an image the model generated (Responses) enters the history with its bytes: the next request renders and the package keeps the image", async () => {
    const pkg = await packageFolder();
    const server = await replaying("openai-responses/image-generation-tool.chunks.txt", "/v1");
    const opened = await openLiveConversation(pkg, {
      backend: backend("openai-responses", server.baseUrl),
    });
    opened.conversation.send("Draw a cat");
    await opened.conversation.whenIdle();
    const history = opened.conversation.snapshot().history;
    const image = history[1]?.content.find((block) => block.type === "image");
    expect(image).toMatchObject({ type: "image", mimeType: "image/webp" });
    const sha256 = image?.type === "image" ? image.sha256 : "";
    expect(opened.conversation.images().get(sha256)?.byteLength).toBeGreaterThan(0);
    // The next request is rendered (the image named in text: Responses takes no assistant image).
    opened.conversation.send("Thanks");
    await opened.conversation.whenIdle();
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body.toString("utf8")).toContain(
      `[Generated image: image/webp, sha256 ${sha256}]`,
    );
    await opened.save();
    const reopened = await openLiveConversation(pkg, {
      backend: backend("openai-responses", server.baseUrl),
    });
    expect(reopened.conversation.snapshot().history[1]?.content).toContainEqual({
      type: "image",
      sha256,
      mimeType: "image/webp",
    });
  });
});
