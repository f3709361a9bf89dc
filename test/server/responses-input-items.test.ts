/**
 * The input items real clients send (issue 17): system and developer messages (Codex sends its
 * instructions as developer messages; the AI SDK sends `system:` as one), refusal parts,
 * function_call_output with content parts, item_reference (the AI SDK's second turn), reasoning
 * items given back, and the clear refusal of file ids and files. The server runs on loopback with
 * a stub model behind it: local servers speaking each provider's wire format
 * (test/support/responses-stubs.ts), not the providers.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { startStubbedServer, type StubbedServer } from "../support/responses-stubs.js";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/clients/${name}`, import.meta.url), "utf8"));

describeEachDialect("Responses API input items", (getDatabase) => {
  let stubbed: StubbedServer;

  beforeAll(async () => {
    stubbed = await startStubbedServer(getDatabase());
  });
  afterAll(async () => {
    await stubbed.close();
  });

  it("Codex's first request (developer messages first, no instructions) is answered; the developer text reaches the system slot and is kept with its role", async () => {
    const codex = fixture("codex-0.171.0-exec-first-request.body.json");
    // Codex also declares web_search, refused below (hosted tools); here without it.
    const body = {
      ...codex,
      model: "claude-codex",
      stream: false,
      // Codex sends store: false (not readable back by the caller); stored here to read it.
      store: true,
      tools: codex.tools.filter((tool: { type: string }) => tool.type !== "web_search"),
    };
    const reply = await stubbed.post("/responses", body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const sent = stubbed.lastSent("anthropic");
    const developerText = codex.input[0].content[0].text as string;
    expect(sent.system).toContain(developerText.slice(0, 200));
    expect(sent.system).toContain(codex.input[1].content[1].text);
    expect(sent.messages.map((message: { role: string }) => message.role)).toEqual(["user"]);
    expect(JSON.stringify(sent.messages)).not.toContain(developerText.slice(0, 200));
    // Codex's namespace tools arrive as function tools named namespace__name.
    expect(sent.tools.map((tool: { name: string }) => tool.name)).toContain(
      "multi_agent_v1__close_agent",
    );

    const items = await stubbed.get(`/responses/${reply.body.id}/input_items?order=asc`);
    expect(items.body.data.map((item: { role: string }) => item.role)).toEqual([
      "developer",
      "developer",
      "user",
      "user",
    ]);
    expect(items.body.data[0].content[0].text).toBe(developerText);
  });

  it("Codex's tool-turn request, web_search included, is answered at OpenAI Responses with every setting passed on", async () => {
    const codex = fixture("codex-0.171.0-tool-turn-second-request.body.json");
    const reply = await stubbed.post("/responses", { ...codex, model: "gpt-codex", stream: false });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const sent = stubbed.lastSent("openai-responses");
    expect(sent.tools).toContainEqual(
      codex.tools.find((tool: { type: string }) => tool.type === "web_search"),
    );
    expect(sent).toMatchObject({
      tool_choice: codex.tool_choice,
      parallel_tool_calls: codex.parallel_tool_calls,
      reasoning: codex.reasoning,
      include: codex.include,
      prompt_cache_key: codex.prompt_cache_key,
    });
    const last = sent.input[sent.input.length - 1];
    expect(last).toMatchObject({ type: "function_call_output" });
    expect(last.output).toContain("hello-from-tool");
    expect(JSON.stringify(sent)).not.toContain("x-codex-installation-id");
  });

  it("system and developer messages reach each provider's own system slot, after instructions, in order", async () => {
    const input = [
      { role: "system", content: "System rule." },
      { role: "developer", content: [{ type: "input_text", text: "Developer rule." }] },
      { role: "user", content: "Hello" },
    ];
    const expected = "Be brief.\n\nSystem rule.\n\nDeveloper rule.";
    for (const model of ["claude-x", "gpt-x", "gemini-x", "chat-x"]) {
      const reply = await stubbed.post("/responses", { model, input, instructions: "Be brief." });
      expect(reply.status, `${model}: ${JSON.stringify(reply.body)}`).toBe(200);
    }
    expect(stubbed.lastSent("anthropic").system).toBe(expected);
    expect(stubbed.lastSent("openai-responses").instructions).toBe(expected);
    expect(stubbed.lastSent("gemini").systemInstruction).toEqual({ parts: [{ text: expected }] });
    const chat = stubbed.lastSent("openrouter").messages;
    expect(chat[0]).toMatchObject({ role: "system" });
    expect(JSON.stringify(chat[0])).toContain("Developer rule.");
    expect(chat.slice(1).map((message: { role: string }) => message.role)).toEqual(["user"]);
  });

  it("refusal parts and function_call_output given as content parts are taken as text", async () => {
    const reply = await stubbed.post("/responses", {
      model: "claude-x",
      input: [
        { role: "user", content: "Do something bad" },
        { role: "assistant", content: [{ type: "refusal", refusal: "I can't help with that." }] },
        { type: "function_call", call_id: "call_a", name: "look", arguments: "{}" },
        {
          type: "function_call_output",
          call_id: "call_a",
          output: [
            { type: "input_text", text: "line one" },
            { type: "input_text", text: "line two" },
          ],
        },
      ],
      tools: [{ type: "function", name: "look", parameters: { type: "object" } }],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const sent = JSON.stringify(stubbed.lastSent("anthropic").messages);
    expect(sent).toContain("I can't help with that.");
    expect(sent).toContain("line one\\nline two");
  });

  it("an input_image file_id, an input_file and image bytes that are no image are refused naming the part; nothing is written", async () => {
    const subject = uniqueName("images");
    const { key } = await stubbed.server.apiKeyFor(subject);
    const before = stubbed.stubs.anthropic.requests.length;
    const parts: [Record<string, unknown>, string][] = [
      [{ type: "input_image", file_id: "file-abc" }, "body.input[0].content[1].file_id"],
      [{ type: "input_file", file_id: "file-abc" }, "body.input[0].content[1]"],
    ];
    for (const [part, where] of parts) {
      const reply = await stubbed.post(
        "/responses",
        {
          model: "claude-x",
          input: [{ role: "user", content: [{ type: "input_text", text: "look" }, part] }],
        },
        key,
      );
      expect(reply.status).toBe(400);
      expect(reply.body.error.where).toBe(where);
      expect(reply.body.error.message).toContain(part["type"]);
    }
    const fileReply = await stubbed.post(
      "/responses",
      {
        model: "claude-x",
        input: [
          { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
          {
            type: "function_call_output",
            call_id: "c1",
            output: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }],
          },
        ],
      },
      key,
    );
    expect(fileReply.status).toBe(400);
    expect(fileReply.body.error.where).toBe("body.input[1].output[0].image_url");
    expect(await stubbed.rowCount(subject)).toBe(0);
    expect(stubbed.stubs.anthropic.requests.length).toBe(before);
  });

  it("item_reference items (the AI SDK's next turn) are resolved in the caller's own store; another subject's id is 404", async () => {
    stubbed.stubs.anthropic.script.push({
      text: "Checking.",
      toolCalls: [{ id: "toolu_ref", name: "look", arguments: '{"q":"x"}' }],
    });
    const tools = [{ type: "function", name: "look", parameters: { type: "object" } }];
    const first = await stubbed.post("/responses", {
      model: "claude-x",
      input: "Look x up",
      tools,
    });
    expect(first.status).toBe(200);
    const [message, call] = first.body.output;
    expect(message.type).toBe("message");
    expect(call.type).toBe("function_call");

    const second = await stubbed.post("/responses", {
      model: "claude-x",
      tools,
      input: [
        { role: "user", content: "Look x up" },
        { type: "item_reference", id: message.id },
        { type: "item_reference", id: call.id },
        { type: "function_call_output", call_id: call.call_id, output: "x is 42" },
      ],
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const sent = stubbed.lastSent("anthropic").messages;
    expect(sent.map((entry: { role: string }) => entry.role)).toEqual([
      "user",
      "assistant",
      "user",
    ]);
    expect(JSON.stringify(sent[1])).toContain("Checking.");
    expect(JSON.stringify(sent[1])).toContain('"name":"look"');
    expect(JSON.stringify(sent[2])).toContain("x is 42");

    const other = await stubbed.server.apiKeyFor(uniqueName("other"));
    const foreign = await stubbed.post(
      "/responses",
      { model: "claude-x", input: [{ type: "item_reference", id: message.id }] },
      other.key,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.where).toBe("body.input[0].id");
  });

  it("reasoning items given back reach OpenAI Responses in front of their assistant message, as sent, and are not stored", async () => {
    const reasoning = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque-1" };
    const reply = await stubbed.post("/responses", {
      model: "gpt-x",
      store: true,
      input: [
        { role: "user", content: "Hi" },
        reasoning,
        { role: "assistant", content: [{ type: "output_text", text: "Hello" }] },
        { role: "user", content: "Again" },
      ],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const input = stubbed.lastSent("openai-responses").input;
    expect(input.map((item: { type: string; role?: string }) => item.role ?? item.type)).toEqual([
      "user",
      "reasoning",
      "assistant",
      "user",
    ]);
    expect(input[1]).toEqual(reasoning);
    const items = await stubbed.get(`/responses/${reply.body.id}/input_items`);
    expect(JSON.stringify(items.body)).not.toContain("opaque-1");
  });

  it("reasoning items given back are not sent to another provider (provider material is never stored, A23)", async () => {
    const reply = await stubbed.post("/responses", {
      model: "claude-x",
      input: [
        { role: "user", content: "Hi" },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque" },
        { role: "assistant", content: [{ type: "output_text", text: "Hello" }] },
        { role: "user", content: "Again" },
      ],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const sent = JSON.stringify(stubbed.lastSent("anthropic"));
    expect(sent).not.toContain("opaque");
    expect(sent).toContain("Hello");
  });
});
