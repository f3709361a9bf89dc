/**
 * The `openai` SDK, unchanged, pointed at the server (issue 17), for what the other client
 * tests do not cover: `responses.parse` with a zod text format (structured output), developer
 * messages, a conversation continued by id, and OpenAI's error fields on a refusal. The server
 * runs on loopback; behind it is a stub model, a local server speaking the Anthropic wire
 * format (not Anthropic).
 */
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { expect, it } from "vitest";
import { z } from "zod";
import { describeEachDialect } from "../support/databases.js";
import { stubbedOpenAIClient } from "../support/responses-stubs.js";

describeEachDialect("the openai SDK against the server", (getDatabase) => {
  const { stubbed, client } = stubbedOpenAIClient(getDatabase);

  it("responses.parse with a zod text format gives the parsed object", async () => {
    stubbed().stubs.anthropic.script.push({ text: '{"city":"Oslo","degrees":3}' });
    const response = await client().responses.parse({
      model: "claude-sdk",
      input: [
        { role: "developer", content: "Answer as JSON." },
        { role: "user", content: "Weather in Oslo" },
      ],
      text: {
        format: zodTextFormat(z.object({ city: z.string(), degrees: z.number() }), "weather"),
      },
    });
    expect(response.output_parsed).toEqual({ city: "Oslo", degrees: 3 });
    expect(response.text?.format).toMatchObject({ type: "json_schema", name: "weather" });
    const sent = stubbed().lastSent("anthropic");
    expect(sent.system).toBe("Answer as JSON.");
    expect(sent.output_config.format.schema.properties.city).toEqual({ type: "string" });
  });

  it("a conversation is continued by id, with its context", async () => {
    stubbed().stubs.anthropic.script.push({ text: "Noted." }, { text: "You said 7." });
    const first = await client().responses.create({ model: "claude-sdk", input: "Remember 7." });
    const conversation = (first as unknown as { conversation_id: string }).conversation_id;
    const second = await client().responses.create({
      model: "claude-sdk",
      input: "What did I say?",
      conversation,
    });
    expect(second.output_text).toBe("You said 7.");
    expect(second.conversation?.id).toBe(conversation);
    expect(JSON.stringify(stubbed().lastSent("anthropic").messages)).toContain("Remember 7.");
  });

  it("a refused field is a BadRequestError with OpenAI's param and type", async () => {
    const error = await client()
      .responses.create({ model: "claude-sdk", input: "hi", truncation: "auto" })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("truncation");
    expect(error.type).toBe("invalid_request_error");
  });
});
