import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.js";
import { startServeChild, withoutProviderKeys, type ServeChild } from "./serve-child.js";

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};

// The demo upstream: `verbatim serve --upstream echo` answers without any provider key, through
// the server's whole path (render, transport, stream parsing, storage), to the official client.
describe(
  "verbatim serve --upstream echo and the openai SDK (real child process, loopback)",
  { timeout: 180_000 },
  () => {
    let folder: string;
    let server: ServeChild;
    let client: OpenAI;
    beforeAll(async () => {
      folder = mkdtempSync(join(tmpdir(), "verbatim-echo-"));
      const db = join(folder, "verbatim.sqlite");
      const env = withoutProviderKeys(process.env);
      server = await startServeChild(["--db", db, "--upstream", "echo"], env);
      const created = await runCli(
        ["keys", "create", "--db", db, "--subject", "newcomer", "--json"],
        {
          env,
        },
      );
      expect(created.code).toBe(0);
      const key = (JSON.parse(created.stdout) as { key: string }).key;
      client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
    });
    afterAll(async () => {
      if (server !== undefined) expect(await server.stop()).toBe(0);
      rmSync(folder, { recursive: true, force: true });
    });

    it("says on start that the echo answers", () => {
      expect(server.stdout()).toContain("upstream: echo");
    });

    it("creates a response that echoes the input, and continues it", async () => {
      const first = await client.responses.create({ model: "gpt-5", input: "Hello, verbatim" });
      expect(first.status).toBe("completed");
      expect(first.output_text).toBe("Hello, verbatim");
      const second = await client.responses.create({
        model: "claude-sonnet-4-5",
        input: "And again",
        previous_response_id: first.id,
      });
      expect(second.output_text).toBe("And again");
      expect(second.previous_response_id).toBe(first.id);
      const read = await client.responses.retrieve(second.id);
      expect(read.output_text).toBe("And again");
    });

    it("streams the answer in several deltas", async () => {
      const stream = await client.responses.create({
        model: "gpt-5",
        input: "one two three four",
        stream: true,
      });
      const deltas: string[] = [];
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        if (event.type === "response.output_text.delta") deltas.push(event.delta);
        if (event.type === "response.completed") completed = event.response;
      }
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join("")).toBe("one two three four");
      expect(completed?.output_text ?? completed?.output.length).toBeTruthy();
    });

    it("does a tool round trip: a function call, its output, the answer", async () => {
      const call = await client.responses.create({
        model: "gpt-5",
        input: 'What is the weather? Use get_weather {"city": "Paris"}',
        tools: [weatherTool],
      });
      const functionCall = call.output.find((item) => item.type === "function_call");
      expect(functionCall).toMatchObject({ name: "get_weather" });
      if (functionCall?.type !== "function_call") throw new Error("no function call");
      expect(JSON.parse(functionCall.arguments)).toEqual({ city: "Paris" });

      const answer = await client.responses.create({
        model: "gpt-5",
        previous_response_id: call.id,
        tools: [weatherTool],
        input: [
          { type: "function_call_output", call_id: functionCall.call_id, output: "sunny, 21 °C" },
        ],
      });
      expect(answer.output_text).toBe("get_weather returned: sunny, 21 °C");
    });

    it("streams a tool call's arguments", async () => {
      const stream = await client.responses.create({
        model: "gpt-5",
        input: 'get_weather {"city": "Reykjavík"}',
        tools: [weatherTool],
        stream: true,
      });
      const argumentDeltas: string[] = [];
      for await (const event of stream) {
        if (event.type === "response.function_call_arguments.delta")
          argumentDeltas.push(event.delta);
      }
      expect(argumentDeltas.length).toBeGreaterThan(1);
      expect(JSON.parse(argumentDeltas.join(""))).toEqual({ city: "Reykjavík" });
    });
  },
);
