/**
 * Reasoning items round-trip through the server (issue 17), with the `openai` SDK on both
 * databases: a request with `include: ["reasoning.encrypted_content"]` to a model behind OpenAI
 * Responses (a local stub speaking its wire format, not OpenAI) gets the reasoning item the
 * upstream returned, encrypted content included, in front of its output (plain and streamed);
 * given back in the next request's input it reaches the upstream as received, in front of the
 * assistant message it came with. It is never stored (A23); a reasoning item without encrypted
 * content is not passed on (the upstream keeps nothing: this server sends store: false).
 */
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { expect, it } from "vitest";
import { describeEachDialect } from "../support/databases.js";
import { stubbedOpenAIClient } from "../support/responses-stubs.js";

describeEachDialect("reasoning items round-trip", (getDatabase) => {
  const { stubbed, client } = stubbedOpenAIClient(getDatabase);

  const openai = () => stubbed().stubs["openai-responses"];
  const sentInput = () => stubbed().lastSent("openai-responses").input as Record<string, unknown>[];

  it("the reasoning item is returned with its encrypted content and given back reaches the upstream as received", async () => {
    openai().script.push({ thinking: "Seven is odd.", text: "Odd." }, { text: "Yes." });
    const input: ResponseInputItem[] = [{ role: "user", content: "Is 7 odd?" }];
    const first = await client().responses.create({
      model: "gpt-reasoner",
      input,
      store: false,
      include: ["reasoning.encrypted_content"],
    });
    expect(stubbed().lastSent("openai-responses").include).toEqual(["reasoning.encrypted_content"]);
    expect(first.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = first.output[0];
    expect(reasoning).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Seven is odd." }],
    });
    expect(reasoning && "encrypted_content" in reasoning && reasoning.encrypted_content).toMatch(
      /^gAAAAAB/,
    );
    expect(first.output_text).toBe("Odd.");

    const second = await client().responses.create({
      model: "gpt-reasoner",
      input: [
        ...input,
        ...(first.output as ResponseInputItem[]),
        { role: "user", content: "Sure?" },
      ],
      store: false,
      include: ["reasoning.encrypted_content"],
    });
    expect(second.output_text).toBe("Yes.");
    const sent = sentInput();
    expect(sent.map((item) => item["role"] ?? item["type"])).toEqual([
      "user",
      "reasoning",
      "assistant",
      "user",
    ]);
    expect(sent[1]).toEqual(JSON.parse(JSON.stringify(reasoning)));
  });

  it("streamed: the reasoning item arrives as an output item and in the completed response", async () => {
    openai().script.push({ thinking: "Short.", text: "Done." });
    const stream = await client().responses.create({
      model: "gpt-reasoner",
      input: "Go",
      stream: true,
      include: ["reasoning.encrypted_content"],
    });
    const done: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === "response.output_item.done") done.push(event.item.type);
      if (event.type === "response.completed") completed = event.response;
    }
    expect(done).toContain("reasoning");
    expect(completed?.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const item = completed?.output[0];
    expect(item && "encrypted_content" in item && item.encrypted_content).toMatch(/^gAAAAAB/);
    // Never stored (A23): the stored response has its message only.
    const stored = await client().responses.retrieve(completed?.id ?? "");
    expect(stored.output.map((output) => output.type)).toEqual(["message"]);
  });

  it("a reasoning item without encrypted content is not passed on", async () => {
    openai().script.push({ text: "Fine." });
    await client().responses.create({
      model: "gpt-reasoner",
      input: [
        { role: "user", content: "Hi" },
        { type: "reasoning", id: "rs_unknown", summary: [] },
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Again" },
      ],
    });
    expect(sentInput().map((item) => item["role"] ?? item["type"])).toEqual([
      "user",
      "assistant",
      "user",
    ]);
  });

  it("no reasoning item is returned when the upstream sent none, nor from another provider", async () => {
    stubbed().stubs.anthropic.script.push({ thinking: "Hidden.", text: "Plain." });
    const reply = await client().responses.create({
      model: "claude-reasoner",
      input: "Go",
      include: ["reasoning.encrypted_content"],
    });
    expect(reply.output.map((item) => item.type)).toEqual(["message"]);
  });
});
