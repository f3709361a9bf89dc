/**
 * Issue 31, item 5 (security probe): "`--upstream echo` still sends `/v1/chat/completions` to the
 * real OpenAI upstream with the operator's `OPENAI_API_KEY`". docs/cli.md promises no key and no
 * network in echo mode: every pass-through route (and /v1/responses) is answered by the echo,
 * whatever provider keys and base URLs the environment holds. The provider base URLs point at a
 * local server that counts the connections it gets: none may come.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASS_THROUGH_ROUTES } from "../../packages/server/src/server/routes/pass-through-routes.js";
import { runCli } from "./run-cli.js";
import { startServeChild, withoutProviderKeys, type ServeChild } from "./serve-child.js";

describe(
  "issue 31: verbatim serve --upstream echo reaches no provider, with provider keys set",
  { timeout: 180_000 },
  () => {
    let folder: string;
    let server: ServeChild;
    let key: string;
    let provider: Server;
    let connections = 0;

    beforeAll(async () => {
      // Stands where every provider would be: counts connections, answers none of them.
      provider = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
      const address = provider.address();
      const providerUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
      folder = mkdtempSync(join(tmpdir(), "verbatim-echo-offline-"));
      const db = join(folder, "verbatim.sqlite");
      const env = {
        ...withoutProviderKeys(process.env),
        OPENAI_API_KEY: "sk-operator-openai-key-0123456789",
        OPENAI_BASE_URL: `${providerUrl}/v1`,
        ANTHROPIC_API_KEY: "sk-ant-operator-key-0123456789",
        ANTHROPIC_BASE_URL: providerUrl,
        OPENROUTER_API_KEY: "sk-or-operator-key-0123456789",
        OPENROUTER_BASE_URL: `${providerUrl}/api/v1`,
        GEMINI_API_KEY: "gemini-operator-key-0123456789",
        GEMINI_BASE_URL: providerUrl,
      };
      server = await startServeChild(["--db", db, "--upstream", "echo"], env);
      const created = await runCli(
        ["keys", "create", "--db", db, "--subject", "offline", "--json"],
        { env },
      );
      expect(created.code).toBe(0);
      key = (JSON.parse(created.stdout) as { key: string }).key;
    });
    afterAll(async () => {
      if (server !== undefined) expect(await server.stop()).toBe(0);
      await new Promise((resolve) => provider.close(resolve));
      rmSync(folder, { recursive: true, force: true });
    });

    const posted = new Set<string>();
    const post = async (path: string, body: unknown) => {
      posted.add(path);
      const response = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
      return { status: response.status, text: await response.text() };
    };

    it("issue 31: every pass-through route and /v1/responses answer from the echo, and no connection reaches a provider", async () => {
      const messages = [{ role: "user", content: "Hello, offline" }];
      const anthropic = await post("/v1/messages", { model: "claude-x", max_tokens: 9, messages });
      expect(anthropic.status).toBe(200);
      expect(JSON.parse(anthropic.text)).toMatchObject({
        model: "echo",
        content: [{ type: "text", text: "Hello, offline" }],
      });

      const streamed = await post("/v1/messages", {
        model: "claude-x",
        max_tokens: 9,
        stream: true,
        messages,
      });
      expect(streamed.status).toBe(200);
      expect(streamed.text).toContain("message_stop");

      const count = await post("/v1/messages/count_tokens", { model: "claude-x", messages });
      expect(count.status).toBe(200);
      expect(JSON.parse(count.text)).toEqual({ input_tokens: expect.any(Number) });

      const chat = await post("/v1/chat/completions", { model: "gpt-5", messages });
      expect(chat.status).toBe(200);
      expect(JSON.parse(chat.text)).toMatchObject({
        object: "chat.completion",
        model: "echo",
        choices: [{ message: { role: "assistant", content: "Hello, offline" } }],
      });

      const chatStream = await post("/v1/chat/completions", {
        model: "gpt-5",
        stream: true,
        stream_options: { include_usage: true },
        messages,
      });
      expect(chatStream.status).toBe(200);
      const deltas = chatStream.text
        .split("\n")
        .filter((line) => line.startsWith("data: {"))
        .map((line) => JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] })
        .map((chunk) => chunk.choices[0]?.delta.content ?? "");
      expect(deltas.join("")).toBe("Hello, offline");
      expect(chatStream.text.trimEnd().endsWith("data: [DONE]")).toBe(true);

      const responses = await post("/v1/responses", { model: "gpt-5", input: "Hi there" });
      expect(responses.status).toBe(200);
      expect(JSON.parse(responses.text)).toMatchObject({ status: "completed" });

      expect(connections).toBe(0);
      // A pass-through route added later is added here too.
      for (const route of PASS_THROUGH_ROUTES) expect(posted).toContain(route.path);
    });

    it("issue 31: a chat completion does a tool round trip with the echo's rule", async () => {
      const tools = [{ type: "function", function: { name: "get_weather", parameters: {} } }];
      const ask = { role: "user", content: 'Use get_weather {"city": "Paris"}' };
      const call = await post("/v1/chat/completions", { model: "gpt-5", tools, messages: [ask] });
      expect(call.status).toBe(200);
      const message = (
        JSON.parse(call.text) as {
          choices: { message: { tool_calls: { id: string; function: { arguments: string } }[] } }[];
        }
      ).choices[0]?.message;
      const toolCall = message?.tool_calls[0];
      expect(JSON.parse(toolCall?.function.arguments ?? "")).toEqual({ city: "Paris" });
      const answer = await post("/v1/chat/completions", {
        model: "gpt-5",
        tools,
        messages: [ask, message, { role: "tool", tool_call_id: toolCall?.id, content: "sunny" }],
      });
      expect(JSON.parse(answer.text)).toMatchObject({
        choices: [{ message: { content: "get_weather returned: sunny" }, finish_reason: "stop" }],
      });
      expect(connections).toBe(0);
    });
  },
);
