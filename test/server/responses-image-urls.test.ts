/**
 * Image URLs are not a server-side request forgery hole (issues 15 and 17): the server fetches
 * an `input_image` URL from public addresses only unless the operator allows a host
 * (VERBATIM_IMAGE_URL_HOSTS) or every host (VERBATIM_IMAGE_URLS=any), or none
 * (VERBATIM_IMAGE_URLS=off). Loopback, private, link-local, unique-local addresses and their
 * IPv4-mapped and numeric spellings are refused before a connection is made; redirects are
 * followed by hand and checked hop by hop; the body is capped while it is read. Through
 * `POST /v1/responses` on both databases, with a real loopback HTTP server as the target (it
 * counts what reaches it) and stub models behind the server: a refusal reaches no upstream and
 * writes nothing.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { MAX_IMAGE_BYTES } from "../../packages/server/src/gateway/responses/input-images.js";
import { fetchGuarded } from "../../packages/server/src/gateway/upstream/guarded-fetch.js";
import { imageUrlPolicyFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";

const GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

/** A loopback server on both IPv4 and IPv6 that images are asked from; it logs every request. */
class Target {
  readonly hits: string[] = [];
  /** Bytes written by /endless before its connection closed, once it closed. */
  endless: Promise<number> = new Promise(() => undefined);
  #server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      this.hits.push(request.url ?? "");
      this.#answer(request.url ?? "", response);
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, "::", resolve));
    const address = this.#server.address();
    this.port = typeof address === "object" && address !== null ? address.port : 0;
  }

  #answer(path: string, response: ServerResponse): void {
    const redirect = (location: string) => response.writeHead(302, { location }).end();
    const hop = /^\/hop\/(\d+)$/.exec(path)?.[1];
    if (path === "/pixel.gif") response.writeHead(200, { "content-type": "image/gif" }).end(GIF);
    else if (hop !== undefined) redirect(hop === "0" ? "/pixel.gif" : `/hop/${Number(hop) - 1}`);
    else if (path === "/loop") redirect("/loop");
    else if (path === "/to-localhost") redirect(`http://localhost:${this.port}/secret`);
    else if (path === "/to-ipv6-loopback") redirect(`http://[::1]:${this.port}/secret`);
    else if (path === "/to-metadata") redirect("http://169.254.169.254/latest/meta-data/");
    else if (path === "/to-file") redirect("file:///etc/passwd");
    else if (path === "/huge") {
      // 10 GiB declared, 6 bytes sent, and the connection held open.
      response.writeHead(200, { "content-type": "image/gif", "content-length": 10 * 1024 ** 3 });
      response.write(GIF.subarray(0, 6));
    } else if (path === "/endless") this.#endless(response);
    else response.writeHead(404, { "content-type": "text/plain" }).end("internal secret");
  }

  /** A chunked body that never ends: 64 KiB at a time while the client reads. */
  #endless(response: ServerResponse): void {
    let written = 0;
    this.endless = new Promise((resolve) => response.on("close", () => resolve(written)));
    response.writeHead(200, { "content-type": "image/gif" });
    const chunk = Buffer.concat([GIF, Buffer.alloc(64 * 1024 - GIF.length)]);
    const pump = () => {
      while (!response.destroyed && response.writable) {
        written += chunk.length;
        if (!response.write(chunk)) return void response.once("drain", pump);
      }
    };
    pump();
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

const imageInput = (imageUrl: string) => [
  {
    role: "user",
    content: [
      { type: "input_text", text: "What is this?" },
      { type: "input_image", image_url: imageUrl, detail: "auto" },
    ],
  },
];

describe("VERBATIM_IMAGE_URLS and VERBATIM_IMAGE_URL_HOSTS", () => {
  it("read public (the default), off and any, and host[:port] entries as the URL parser writes hosts", () => {
    expect(imageUrlPolicyFromEnv({})).toEqual({ mode: "public", allowedHosts: [] });
    expect(
      imageUrlPolicyFromEnv({
        VERBATIM_IMAGE_URLS: "Any",
        VERBATIM_IMAGE_URL_HOSTS: " Images.Internal , 10.0.0.7:8080,[FD00::7]:443, 2130706433:80,",
      }),
    ).toEqual({
      mode: "any",
      allowedHosts: [
        { hostname: "images.internal" },
        { hostname: "10.0.0.7", port: 8080 },
        { hostname: "[fd00::7]", port: 443 },
        { hostname: "127.0.0.1", port: 80 },
      ],
    });
    expect(imageUrlPolicyFromEnv({ VERBATIM_IMAGE_URLS: "off" }).mode).toBe("off");
  });

  it("a typo in either stops serve before the database is touched, naming the variable", async () => {
    const folder = mkdtempSync(join(tmpdir(), "verbatim-image-urls-"));
    const cases: [Record<string, string>, string][] = [
      [
        { VERBATIM_IMAGE_URLS: "pubic" },
        'VERBATIM_IMAGE_URLS must be one of public, off, any, not "pubic"',
      ],
      [{ VERBATIM_IMAGE_URLS: "none" }, "VERBATIM_IMAGE_URLS must be one of public, off, any"],
      [
        { VERBATIM_IMAGE_URL_HOSTS: "http://images.internal/" },
        'cannot read the host "http://images.internal/"',
      ],
      [{ VERBATIM_IMAGE_URL_HOSTS: "::1" }, 'cannot read the host "::1"'],
      [{ VERBATIM_IMAGE_URL_HOSTS: "images.internal:99999" }, "cannot read the host"],
      [
        { VERBATIM_IMAGE_URL_HOSTS: "a.internal,b.internal/images" },
        'cannot read the host "b.internal/images"',
      ],
    ];
    for (const [env, words] of cases) {
      const io = bufferIO({ env: { ...process.env, ...env } });
      const untouched = join(folder, "never.sqlite");
      expect(await main(["serve", "--db", untouched, "--port", "0"], io), words).toBe(1);
      expect(io.err()).toContain(words);
      expect(io.err()).toContain(Object.keys(env)[0]);
      expect(existsSync(untouched)).toBe(false);
    }
  });
});

describeEachDialect("image URLs are not a server-side request forgery hole", (getDatabase) => {
  const target = new Target();
  let byDefault: StubbedServer;
  let allowing: StubbedServer;
  let off: StubbedServer;
  let any: StubbedServer;

  beforeAll(async () => {
    await target.start();
    byDefault = await startStubbedServer(getDatabase());
    allowing = await startStubbedServer(getDatabase(), {
      VERBATIM_IMAGE_URL_HOSTS: `127.0.0.1:${target.port}`,
    });
    off = await startStubbedServer(getDatabase(), { VERBATIM_IMAGE_URLS: "off" });
    any = await startStubbedServer(getDatabase(), { VERBATIM_IMAGE_URLS: "any" });
  });
  afterAll(async () => {
    for (const server of [byDefault, allowing, off, any]) await server?.close();
    await target.close();
  });

  const upstreamRequests = (server: StubbedServer) =>
    Object.values(server.stubs).reduce((sum, stub) => sum + stub.requests.length, 0);

  /** Sends an image URL; expects a 400 naming the part, nothing written, no upstream call. */
  async function refused(server: StubbedServer, imageUrl: string): Promise<string> {
    const rows = await server.rowCount();
    const upstream = upstreamRequests(server);
    const reply = await server.post("/responses", { model: "gpt-x", input: imageInput(imageUrl) });
    expect(reply.status, `${imageUrl}: ${JSON.stringify(reply.body)}`).toBe(400);
    expect(reply.body.error.code).toBe("invalid_request");
    expect(reply.body.error.where).toBe("body.input[0].content[1].image_url");
    expect(reply.body.error.hint).toContain("nothing was written");
    expect(await server.rowCount()).toBe(rows);
    expect(upstreamRequests(server)).toBe(upstream);
    return reply.body.error.message as string;
  }

  async function accepted(server: StubbedServer, imageUrl: string): Promise<void> {
    server.stubs["openai-responses"].script.push({ text: "A pixel." });
    const reply = await server.post("/responses", { model: "gpt-x", input: imageInput(imageUrl) });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const sent = server.lastSent("openai-responses").input[0].content[1];
    expect(sent.image_url).toBe(`data:image/gif;base64,${GIF.toString("base64")}`);
  }

  it("by default, loopback, private, link-local and unique-local addresses in any spelling are refused before connecting", async () => {
    const port = target.port;
    const hitsBefore = target.hits.length;
    const literal = "; this server fetches images from public addresses";
    const cases: [string, string][] = [
      [`http://127.0.0.1:${port}/pixel.gif`, "names a non-public address (loopback)"],
      [`http://[::1]:${port}/pixel.gif`, "names a non-public address (loopback)"],
      [
        `http://[::ffff:127.0.0.1]:${port}/pixel.gif`,
        "names a non-public address (IPv4-mapped loopback)",
      ],
      [`http://2130706433:${port}/pixel.gif`, "names a non-public address (loopback)"],
      [`http://0x7f.1:${port}/pixel.gif`, "names a non-public address (loopback)"],
      [`http://0177.0.0.1:${port}/pixel.gif`, "names a non-public address (loopback)"],
      [`http://127.1:${port}/pixel.gif`, "names a non-public address (loopback)"],
      [`https://127.0.0.1:${port}/pixel.gif`, "names a non-public address (loopback)"],
      ["http://169.254.169.254/latest/meta-data/", "names a non-public address (link-local)"],
      ["http://10.0.0.1/", "names a non-public address (private)"],
      ["http://[fc00::1]/", "names a non-public address (unique local)"],
      ["http://[64:ff9b::a9fe:a9fe]/", "names a non-public address (NAT64 link-local)"],
      ["http://0.0.0.0/", "names a non-public address (unspecified)"],
      ["http://100.64.0.1/", "names a non-public address (carrier-grade NAT)"],
    ];
    const started = Date.now();
    for (const [imageUrl, words] of cases) {
      const message = await refused(byDefault, imageUrl);
      expect(message).toContain(words);
      expect(message).toContain(literal);
    }
    // A host name is judged by what it resolves to (localhost: 127.0.0.1 and maybe ::1).
    expect(await refused(byDefault, `http://localhost:${port}/pixel.gif`)).toBe(
      "the image URL names a host that does not resolve to public addresses only; this server fetches images from public addresses",
    );
    expect(target.hits.length).toBe(hitsBefore);
    // Nothing waited for a connection (169.254.169.254 and 10.0.0.1 would hang until a timeout).
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("an allowed host is fetched; one that redirects to a refused host or to file: is refused without reaching it", async () => {
    const base = `http://127.0.0.1:${target.port}`;
    await accepted(allowing, `${base}/pixel.gif`);
    // The allow-list names a host and port: the same server under another name is refused.
    expect(await refused(allowing, `http://localhost:${target.port}/pixel.gif`)).toContain(
      "does not resolve to public addresses only",
    );
    expect(await refused(allowing, `${base}/to-localhost`)).toContain(
      "the image URL's redirect names a host that does not resolve to public addresses only",
    );
    expect(await refused(allowing, `${base}/to-ipv6-loopback`)).toContain(
      "the image URL's redirect names a non-public address (loopback)",
    );
    expect(await refused(allowing, `${base}/to-metadata`)).toContain(
      "the image URL's redirect names a non-public address (link-local)",
    );
    expect(await refused(allowing, `${base}/to-file`)).toBe(
      "the image URL's redirect is not an http(s) URL",
    );
    expect(target.hits).not.toContain("/secret");
    // A refused internal answer is not echoed: a 404 says its status only, not its body.
    const missing = await refused(allowing, `${base}/missing.png`);
    expect(missing).toBe("the image URL answered 404");
  });

  it("three redirects are followed, a fourth is not, and a redirect loop stops", async () => {
    const base = `http://127.0.0.1:${target.port}`;
    await accepted(allowing, `${base}/hop/2`);
    expect(await refused(allowing, `${base}/hop/3`)).toBe(
      "the image URL redirects more than 3 times",
    );
    const before = target.hits.length;
    expect(await refused(allowing, `${base}/loop`)).toBe(
      "the image URL redirects more than 3 times",
    );
    expect(target.hits.slice(before)).toEqual(["/loop", "/loop", "/loop", "/loop"]);
  });

  it("a declared length over the cap is refused at once, nothing allocated from the header", async () => {
    const arrayBuffers = process.memoryUsage().arrayBuffers;
    const started = Date.now();
    expect(await refused(allowing, `http://127.0.0.1:${target.port}/huge`)).toBe(
      `the image URL declares ${10 * 1024 ** 3} bytes, more than the ${MAX_IMAGE_BYTES} this server keeps`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(process.memoryUsage().arrayBuffers - arrayBuffers).toBeLessThan(MAX_IMAGE_BYTES);
  });

  it("a chunked body is abandoned as soon as it passes the cap", async () => {
    expect(await refused(allowing, `http://127.0.0.1:${target.port}/endless`)).toBe(
      `the image URL sent more than the ${MAX_IMAGE_BYTES} bytes this server keeps (it stopped reading there)`,
    );
    // The connection is closed: the target stops writing soon after the cap (socket buffers).
    const written = await target.endless;
    expect(written).toBeGreaterThan(MAX_IMAGE_BYTES);
    expect(written).toBeLessThan(MAX_IMAGE_BYTES + 16 * 1024 * 1024);
  });

  it("off: no URL is fetched, the reply says to send a data URL; a data URL still works", async () => {
    const before = target.hits.length;
    const rows = await off.rowCount();
    const reply = await off.post("/responses", {
      model: "gpt-x",
      input: imageInput(`http://127.0.0.1:${target.port}/pixel.gif`),
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toBe("this server does not fetch image URLs");
    expect(reply.body.error.hint).toContain("data URL");
    expect(await off.rowCount()).toBe(rows);
    expect(target.hits.length).toBe(before);
    await accepted(off, `data:image/gif;base64,${GIF.toString("base64")}`);
  });

  it("the Conversations API's items follow the same setting (default, allow-list, off)", async () => {
    const create = (server: StubbedServer) =>
      server.post("/conversations", {
        items: imageInput(`http://127.0.0.1:${target.port}/pixel.gif`),
      });
    const rows = await byDefault.rowCount();
    const refusedByDefault = await create(byDefault);
    expect(refusedByDefault.status).toBe(400);
    expect(refusedByDefault.body.error.message).toContain("names a non-public address (loopback)");
    expect(await byDefault.rowCount()).toBe(rows);
    const refusedWhenOff = await create(off);
    expect(refusedWhenOff.status).toBe(400);
    expect(refusedWhenOff.body.error.message).toBe("this server does not fetch image URLs");
    const allowed = await create(allowing);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
  });

  it("input_tokens reads image URLs under the same setting (default, allow-list, off)", async () => {
    // chat-* (the Chat format) has no counting endpoint: the server estimates.
    const count = (server: StubbedServer) =>
      server.post("/responses/input_tokens", {
        model: "chat-x",
        input: imageInput(`http://127.0.0.1:${target.port}/pixel.gif`),
      });
    const hits = target.hits.length;
    const refusedByDefault = await count(byDefault);
    expect(refusedByDefault.status).toBe(400);
    expect(refusedByDefault.body.error.message).toContain("names a non-public address (loopback)");
    const refusedWhenOff = await count(off);
    expect(refusedWhenOff.status).toBe(400);
    expect(refusedWhenOff.body.error.message).toBe("this server does not fetch image URLs");
    expect(target.hits.length).toBe(hits);
    const allowed = await count(allowing);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(target.hits.length).toBe(hits + 1);
  });

  it("any: internal hosts are fetched (a server only trusted callers reach), still capped and with checked redirects", async () => {
    await accepted(any, `http://localhost:${target.port}/pixel.gif`);
    await accepted(any, `http://[::1]:${target.port}/hop/1`);
    expect(await refused(any, `http://127.0.0.1:${target.port}/loop`)).toBe(
      "the image URL redirects more than 3 times",
    );
  });
});

describe("the public mode's DNS check", () => {
  const options = {
    policy: { mode: "public", allowedHosts: [] },
    maxBytes: MAX_IMAGE_BYTES,
    timeoutMs: 5_000,
  } as const;

  it("every address a name resolves to must be public: one private address among public ones refuses it", async () => {
    const asked: string[] = [];
    const resolver = async (hostname: string) => {
      asked.push(hostname);
      return [
        { address: "93.184.216.34", family: 4 },
        { address: "10.1.2.3", family: 4 },
      ];
    };
    await expect(
      fetchGuarded("http://images.example:8080/a.png", { ...options, resolver }),
    ).rejects.toThrow("the image URL names a host that does not resolve to public addresses only");
    expect(asked).toEqual(["images.example"]);
  });

  it("a host that sends its headers and then nothing is given up after the time limit", async () => {
    const stalling = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "image/gif" });
      response.write(GIF.subarray(0, 6));
    });
    await new Promise<void>((resolve) => stalling.listen(0, "127.0.0.1", resolve));
    const address = stalling.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    try {
      const started = Date.now();
      await expect(
        fetchGuarded(`http://127.0.0.1:${port}/slow.gif`, {
          ...options,
          policy: { mode: "any", allowedHosts: [] },
          timeoutMs: 300,
        }),
      ).rejects.toThrow("the image URL did not answer within 0.3 s");
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      stalling.closeAllConnections();
      await new Promise((resolve) => stalling.close(resolve));
    }
  });

  it("a name that does not resolve is refused in the same words (no oracle on internal names)", async () => {
    const resolver = async () => Promise.reject(new Error("ENOTFOUND"));
    await expect(fetchGuarded("http://nowhere.example/", { ...options, resolver })).rejects.toThrow(
      "the image URL names a host that does not resolve to public addresses only",
    );
  });
});
