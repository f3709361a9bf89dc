/**
 * Issue 35 item 1: Google's Gemini API passed through and recorded like /v1/messages, behind a
 * local upstream that answers with bodies captured from the real API
 * (test/support/gemini-upstream.ts): `:generateContent` (JSON), `:streamGenerateContent` with
 * `?alt=sse` and without (one JSON array), `:countTokens` (not recorded); the caller's key as
 * `x-goog-api-key` or `?key=`, never forwarded nor stored; bytes back byte for byte; a growing
 * session as one chain with its gateway messages (function call and response, an inline image
 * by SHA-256, the thought signature kept in the bytes only); usage per call; the cache report's
 * verdict; clear errors for bad input. On SQLite and PostgreSQL.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { tokenPrice } from "../../packages/library/src/pricing/cost.js";
import { ZERO_USAGE } from "../../packages/library/src/pricing/types.js";
import { upstreamConfigFromEnv } from "../../packages/server/src/server/upstream/config.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import {
  CAPTURED,
  CAPTURED_REQUESTS,
  functionCallReply,
  replyBody,
  startGeminiUpstream,
  withUsage,
  type GeminiUpstream,
} from "../support/gemini-upstream.js";
import { callsPlaced, recordedCallRows } from "../support/recorded-calls.js";
import { TEST_OPERATOR_TOKEN, testServer, type TestServer } from "../support/server.js";

const UPSTREAM_KEY = "gemini-upstream-key-7c1d";
const MODEL = "gemini-2.5-flash";
const operator = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };

interface Item {
  readonly type: string;
  readonly role?: string;
  readonly content?: readonly Record<string, unknown>[];
  readonly call_id?: string;
  readonly name?: string;
  readonly arguments?: string;
  readonly output?: unknown;
}

describeEachDialect("Gemini pass-through, recorded", (getDatabase) => {
  let gemini: GeminiUpstream;
  let server: TestServer;
  let baseUrl: string;

  beforeAll(async () => {
    gemini = await startGeminiUpstream({ apiKey: UPSTREAM_KEY });
    server = await testServer(getDatabase(), {
      upstream: upstreamConfigFromEnv({
        GEMINI_API_KEY: UPSTREAM_KEY,
        GEMINI_BASE_URL: gemini.baseUrl,
      }),
    });
    await server.app.listen({ host: "127.0.0.1", port: 0 });
    const address = server.app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    baseUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await server.app.close();
    await gemini.close();
  });

  async function caller(): Promise<{ subject: string; key: string }> {
    const subject = uniqueName("subject");
    const { key } = await server.apiKeyFor(subject);
    return { subject, key };
  }

  /** POSTs `body` (bytes as given) to a Gemini path with the key in a header or the query. */
  async function post(
    path: string,
    body: string | Buffer,
    key: string,
    how: "header" | "query" = "header",
  ): Promise<{ status: number; type: string | null; bytes: Buffer }> {
    const url =
      how === "query"
        ? `${baseUrl}${path}${path.includes("?") ? "&" : "?"}key=${encodeURIComponent(key)}`
        : `${baseUrl}${path}`;
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(how === "header" ? { "x-goog-api-key": key } : {}),
      },
      body: typeof body === "string" ? body : new Uint8Array(body),
    });
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      bytes: Buffer.from(await response.arrayBuffer()),
    };
  }

  async function operatorGet(path: string): Promise<Response> {
    return fetch(`${baseUrl}${path}`, { headers: operator });
  }

  /** Nothing the upstream received or the store holds names the caller's key. */
  async function keyNeverLeft(subject: string, key: string, from: number): Promise<void> {
    for (const seen of gemini.requests.slice(from)) {
      expect(seen.headers["x-goog-api-key"]).toBe(UPSTREAM_KEY);
      expect(seen.headers["authorization"]).toBeUndefined();
      expect(seen.query.has("key")).toBe(false);
      expect(JSON.stringify(seen.headers) + seen.url + seen.bytes.toString("utf8")).not.toContain(
        key,
      );
    }
    const rows = await recordedCallRows(getDatabase(), subject);
    for (const row of rows) {
      const stored = JSON.stringify({ ...row, request: undefined, response: undefined });
      expect(stored).not.toContain(key);
      expect(stored).not.toContain(UPSTREAM_KEY);
      expect(row.path).not.toContain("key=");
    }
  }

  it("generateContent (JSON), key as x-goog-api-key: the upstream's bytes back, recorded byte for byte, the key replaced and never stored (issue 35 item 1)", async () => {
    const { subject, key } = await caller();
    const from = gemini.requests.length;
    gemini.reply = () => CAPTURED.textJson;
    const sent = CAPTURED_REQUESTS.functionCall;
    const answer = await post(`/v1beta/models/${MODEL}:generateContent`, sent, key);
    expect(answer.status).toBe(200);
    expect(answer.type).toBe("application/json; charset=UTF-8");
    expect(answer.bytes.equals(replyBody(CAPTURED.textJson, "json"))).toBe(true);
    expect(gemini.requests[from]?.url).toBe(`/v1beta/models/${MODEL}:generateContent`);
    expect(gemini.requests[from]?.bytes.equals(sent)).toBe(true);

    await callsPlaced(getDatabase(), subject, 1);
    const [row] = await recordedCallRows(getDatabase(), subject);
    if (row === undefined) throw new Error("the call was recorded");
    const facts = (await (
      await operatorGet(`/ai-gateway/recorded-calls/${row.id}`)
    ).json()) as Record<string, unknown>;
    expect(facts).toMatchObject({
      wire_format: "gemini-generate-content",
      path: `/v1beta/models/${MODEL}:generateContent`,
      model: MODEL,
      status_code: 200,
      message_count: 1,
      // text.json: promptTokenCount 3, candidatesTokenCount 2, thoughtsTokenCount 17.
      usage: { input_tokens: 3, output_tokens: 19, cache_read_tokens: 0 },
    });
    const request = await operatorGet(`/ai-gateway/recorded-calls/${row.id}/request`);
    expect(Buffer.from(await request.arrayBuffer()).equals(sent)).toBe(true);
    const response = await operatorGet(`/ai-gateway/recorded-calls/${row.id}/response`);
    expect(response.headers.get("content-type")).toBe("application/json; charset=UTF-8");
    expect(Buffer.from(await response.arrayBuffer()).equals(answer.bytes)).toBe(true);
    await keyNeverLeft(subject, key, from);
  });

  it("streamGenerateContent?alt=sse, key as ?key=: the key leaves the URL upstream and in the store, the events come back byte for byte (issue 35 item 1)", async () => {
    const { subject, key } = await caller();
    const from = gemini.requests.length;
    gemini.reply = () => CAPTURED.thinkingFunctionCallStream;
    const sent = JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "How many days?" }] }],
    });
    const answer = await post(
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
      sent,
      key,
      "query",
    );
    expect(answer.status).toBe(200);
    expect(answer.type).toBe("text/event-stream");
    expect(answer.bytes.equals(CAPTURED.thinkingFunctionCallStream.captured?.sse as Buffer)).toBe(
      true,
    );
    expect(gemini.requests[from]?.url).toBe(
      `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
    );

    await callsPlaced(getDatabase(), subject, 1);
    const [row] = await recordedCallRows(getDatabase(), subject);
    expect(row?.path).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    expect(row?.response.equals(answer.bytes)).toBe(true);
    expect(row?.requestText).toBe(sent);
    // The last chunk's usage: prompt 38, candidates 6, thoughts 168.
    expect([row?.input_tokens, row?.output_tokens, row?.cache_read_tokens]).toEqual([38, 174, 0]);
    await keyNeverLeft(subject, key, from);
  });

  it("streamGenerateContent without alt: one JSON array streamed, recorded, its function call read (issue 35 item 1)", async () => {
    const { subject, key } = await caller();
    gemini.reply = () => functionCallReply([{ name: "list_directory", args: { dir_path: "." } }]);
    const answer = await post(
      `/v1beta/models/${MODEL}:streamGenerateContent`,
      JSON.stringify({ contents: [{ role: "user", parts: [{ text: "List the files" }] }] }),
      key,
    );
    expect(answer.status).toBe(200);
    expect(answer.type).toBe("application/json; charset=UTF-8");
    const chunks = JSON.parse(answer.bytes.toString("utf8")) as unknown[];
    expect(chunks).toHaveLength(3);

    await callsPlaced(getDatabase(), subject, 1);
    const [row] = await recordedCallRows(getDatabase(), subject);
    expect(row?.response.equals(answer.bytes)).toBe(true);
    expect([row?.input_tokens, row?.output_tokens]).toEqual([38, 174]);
    const items = await itemsOf(row?.conversation_id as string, key);
    expect(items.map((item) => item.type)).toEqual(["message", "function_call"]);
    expect(items[1]).toMatchObject({ name: "list_directory", arguments: '{"dir_path":"."}' });
  });

  it("countTokens is passed through and not recorded (issue 35 item 1)", async () => {
    const { subject, key } = await caller();
    const from = gemini.requests.length;
    const answer = await post(
      `/v1beta/models/${MODEL}:countTokens`,
      JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Count me" }] }] }),
      key,
      "query",
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.bytes.toString("utf8"))).toHaveProperty("totalTokens");
    expect(gemini.requests[from]?.method).toBe("countTokens");
    expect(gemini.requests[from]?.url).toBe(`/v1beta/models/${MODEL}:countTokens`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await recordedCallRows(getDatabase(), subject)).toHaveLength(0);
    await keyNeverLeft(subject, key, from);
  });

  async function itemsOf(conversationId: string, key: string): Promise<Item[]> {
    const response = await fetch(
      `${baseUrl}/v1/conversations/${conversationId}/items?order=asc&limit=100`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: Item[] }).data;
  }

  it("a growing 3-call session is one chain: function call and response, an inline image by SHA-256, the thought signature kept in the bytes; usage per call; the cache report's verdicts (issue 35 item 1)", async () => {
    const { subject, key } = await caller();
    const image = (
      JSON.parse(CAPTURED_REQUESTS.image.toString("utf8")) as {
        contents: { parts: Record<string, { mimeType: string; data: string }>[] }[];
      }
    ).contents[0]?.parts[1]?.["inlineData"] as { mimeType: string; data: string };
    const imageBytes = Buffer.from(image.data, "base64");
    const imageSha = createHash("sha256").update(imageBytes).digest("hex");
    const prefix = {
      systemInstruction: { parts: [{ text: "You are a calendar assistant." }] },
      tools: [{ functionDeclarations: [{ name: "now", description: "The current time" }] }],
      toolConfig: { functionCallingConfig: { mode: "AUTO" } },
    };
    const signature = (
      CAPTURED.thinkingFunctionCallStream.chunks[2] as {
        candidates: { content: { parts: { thoughtSignature: string }[] } }[];
      }
    ).candidates[0]?.content.parts[0]?.thoughtSignature as string;
    const contents: unknown[] = [
      {
        role: "user",
        parts: [{ text: "How many days until New Year's Eve?" }, { inlineData: image }],
      },
    ];
    const body = (system = prefix.systemInstruction) =>
      JSON.stringify({ contents, ...prefix, systemInstruction: system });

    // 1: a thought, then a signed function call (streamed).
    gemini.reply = () => CAPTURED.thinkingFunctionCallStream;
    const one = await post(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, body(), key);
    expect(one.status).toBe(200);
    // 2: the call given back as Gemini clients do (its signature on it), and its result.
    contents.push(
      {
        role: "model",
        parts: [{ functionCall: { name: "now", args: {} }, thoughtSignature: signature }],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "now", response: { output: "2025-12-06T10:00:00Z" } } },
        ],
      },
    );
    gemini.reply = () => CAPTURED.functionResultStream;
    const two = await post(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, body(), key);
    expect(two.status).toBe(200);
    // 3: the answer given back, a new question (JSON, an implicit cache hit).
    contents.push(
      { role: "model", parts: [{ text: "今日の東京の天気は曇りで、気温は22度です。\n" }] },
      { role: "user", parts: [{ text: "Thanks!" }] },
    );
    gemini.reply = () => CAPTURED.implicitCacheJson;
    const three = await post(`/v1beta/models/${MODEL}:generateContent`, body(), key);
    expect(three.status).toBe(200);

    await callsPlaced(getDatabase(), subject, 3);
    const rows = await recordedCallRows(getDatabase(), subject);
    expect(new Set(rows.map((row) => row.conversation_id)).size).toBe(1);
    expect(rows.map((row) => row.matched_count)).toEqual([0, 1, 3]);
    expect(rows.map((row) => row.previous_call_id)).toEqual([null, rows[0]?.id, rows[1]?.id]);
    // Usage: 1 the stream's last chunk; 3 input = 12013 prompt - 11243 cached, output 15 + 73.
    expect(rows.map((row) => [row.input_tokens, row.output_tokens, row.cache_read_tokens])).toEqual(
      [
        [38, 174, 0],
        [138, 15, 0],
        [770, 88, 11243],
      ],
    );
    // The signature is signed material: in the recorded bytes, not in the gateway messages.
    expect(rows[1]?.requestText).toContain(signature);

    const conversationId = rows[0]?.conversation_id as string;
    const items = await itemsOf(conversationId, key);
    expect(items.map((item) => `${item.type}:${item.role ?? ""}`)).toEqual([
      "message:user",
      "function_call:",
      "function_call_output:",
      "message:assistant",
      "message:user",
      "message:assistant",
    ]);
    expect(items[0]?.content).toEqual([
      { type: "input_text", text: "How many days until New Year's Eve?" },
      {
        type: "input_image",
        image_url: `data:image/jpeg;base64,${imageBytes.toString("base64")}`,
        detail: "auto",
      },
    ]);
    // The answer of call 1, given back by call 2, is stored once (no second copy beside it);
    // its result names its call.
    const written = await getDatabase()
      .db.selectFrom("ai_gateway_messages")
      .select("id")
      .where("conversation_id", "=", conversationId)
      .execute();
    expect(written).toHaveLength(items.length);
    expect(items[1]).toMatchObject({ name: "now", arguments: "{}" });
    expect(items[2]).toMatchObject({ call_id: items[1]?.call_id, output: "2025-12-06T10:00:00Z" });
    expect(JSON.stringify(items)).not.toContain(signature);
    const stored = await getDatabase()
      .db.selectFrom("ai_gateway_images")
      .select("sha256")
      .where("subject_uid", "=", subject)
      .execute();
    expect(stored.map((row) => row.sha256)).toEqual([imageSha]);

    // The answers' usage and a price for the model (issue 35: cost where pricing knows it).
    const price = tokenPrice(
      "gemini",
      MODEL,
      { ...ZERO_USAGE, input: 770, output: 88, cacheRead: 11243 },
      new Date(),
    );
    expect(price).toBeGreaterThan(0);

    // Cache report: every call kept the previous one's prefix; a changed system instruction breaks it.
    contents.push(
      {
        role: "model",
        parts: [{ text: "Red Riding Hood is looking for **directions** in the forest." }],
      },
      { role: "user", parts: [{ text: "And tomorrow?" }] },
    );
    gemini.reply = () =>
      withUsage(CAPTURED.implicitCacheJson, {
        promptTokenCount: 12100,
        cachedContentTokenCount: 0,
      });
    const four = await post(
      `/v1beta/models/${MODEL}:generateContent`,
      body({ parts: [{ text: "You are a calendar assistant. Today is Saturday." }] }),
      key,
    );
    expect(four.status).toBe(200);
    await callsPlaced(getDatabase(), subject, 4);
    const report = (await (
      await operatorGet(`/ai-gateway/conversations/${conversationId}/cache`)
    ).json()) as {
      calls: {
        cache: string;
        lost_tokens: number;
        lost_dollars: number | null;
        difference: Record<string, unknown> | null;
      }[];
    };
    expect(report.calls.map((call) => call.cache)).toEqual(["first", "kept", "kept", "broken"]);
    expect(report.calls[3]?.difference).toMatchObject({
      path: "$.systemInstruction.parts[0].text",
      before: '"You are a calendar assistant."',
      after: '"You are a calendar assistant. Today is Saturday."',
    });
    // Implicit caching: the previous call's whole prompt (770 + 11243) could have been read.
    expect(report.calls[3]?.lost_tokens).toBe(12013);
    expect(report.calls[3]?.lost_dollars).toBeGreaterThan(0);
  });

  it("bad input gets a clear error and nothing goes upstream: an unknown method or model form, no body, a body that is not JSON, no key (issue 35 item 1)", async () => {
    const { subject, key } = await caller();
    const from = gemini.requests.length;
    const error = async (
      path: string,
      body: string | undefined,
      headers: Record<string, string>,
    ) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers,
        body: body ?? null,
      });
      return {
        status: response.status,
        error: ((await response.json()) as { error: Record<string, unknown> }).error,
      };
    };
    const json = { "content-type": "application/json", "x-goog-api-key": key };
    const unknownMethod = await error(`/v1beta/models/${MODEL}:embedContent`, "{}", json);
    expect(unknownMethod.status).toBe(404);
    expect(unknownMethod.error).toMatchObject({ code: "route_not_found", where: "path" });
    expect(String(unknownMethod.error["hint"])).toContain(":generateContent");
    const noMethod = await error(`/v1beta/models/${MODEL}`, "{}", json);
    expect(noMethod.status).toBe(404);
    const noBody = await error(`/v1beta/models/${MODEL}:generateContent`, undefined, {
      "x-goog-api-key": key,
    });
    expect(noBody.status).toBe(400);
    expect(noBody.error).toMatchObject({ code: "invalid_request", where: "body" });
    const notJson = await error(`/v1beta/models/${MODEL}:generateContent`, "{contents:", json);
    expect(notJson.status).toBe(400);
    expect(notJson.error["code"]).toBe("invalid_json");
    const noKey = await error(`/v1beta/models/${MODEL}:generateContent`, "{}", {
      "content-type": "application/json",
    });
    expect(noKey.status).toBe(401);
    const wrongKey = await error(`/v1beta/models/${MODEL}:generateContent?key=vbk_wrong`, "{}", {
      "content-type": "application/json",
    });
    expect(wrongKey.status).toBe(401);
    expect(gemini.requests.length).toBe(from);
    expect(await recordedCallRows(getDatabase(), subject)).toHaveLength(0);
  });
});
