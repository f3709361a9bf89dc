import { describe, expect, it } from "vitest";
import { echoAnswer, EchoRequestError, NO_TEXT_ANSWER } from "./echo-answer.js";

const tools = [
  { name: "get_weather", description: "", input_schema: { type: "object" } },
  { name: "search", description: "", input_schema: { type: "object" } },
];

const user = (content: unknown) => ({ role: "user", content });

describe("the echo upstream's answer rule (docs/cli.md)", () => {
  it("echoes the last message's text, text blocks joined by a newline", () => {
    expect(echoAnswer({ messages: [user("Hello")] })).toEqual({ kind: "text", text: "Hello" });
    expect(
      echoAnswer({
        messages: [
          user("first"),
          { role: "assistant", content: "first" },
          user([
            { type: "text", text: "a" },
            { type: "image", source: {} },
            { type: "text", text: "b" },
          ]),
        ],
      }),
    ).toEqual({ kind: "text", text: "a\nb" });
    expect(echoAnswer({ messages: [user([{ type: "image", source: {} }])] })).toEqual({
      kind: "text",
      text: NO_TEXT_ANSWER,
    });
  });

  it("calls the tool the text names first (whole word), with the text's JSON object as arguments", () => {
    expect(
      echoAnswer({ tools, messages: [user('please search, then get_weather {"city": "Paris"}')] }),
    ).toEqual({ kind: "toolCall", name: "search", input: { city: "Paris" } });
    expect(echoAnswer({ tools, messages: [user("get_weather now")] })).toEqual({
      kind: "toolCall",
      name: "get_weather",
      input: {},
    });
    // Not a JSON object: no arguments.
    expect(echoAnswer({ tools, messages: [user("get_weather {city}")] })).toMatchObject({
      input: {},
    });
  });

  it("does not call a tool whose name is only part of a word, nor without tools", () => {
    expect(echoAnswer({ tools, messages: [user("research get_weathers")] })).toEqual({
      kind: "text",
      text: "research get_weathers",
    });
    expect(echoAnswer({ messages: [user("get_weather")] })).toEqual({
      kind: "text",
      text: "get_weather",
    });
  });

  it("answers tool results with the tool's name and the result text", () => {
    const messages = [
      user("get_weather"),
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_1", name: "get_weather", input: {} },
          { type: "tool_use", id: "call_2", name: "search", input: {} },
        ],
      },
      user([
        { type: "tool_result", tool_use_id: "call_1", content: "sunny" },
        {
          type: "tool_result",
          tool_use_id: "call_2",
          content: [{ type: "text", text: "no index" }],
          is_error: true,
        },
      ]),
    ];
    expect(echoAnswer({ tools, messages })).toEqual({
      kind: "text",
      text: "get_weather returned: sunny\nsearch failed: no index",
    });
  });

  it("refuses a body without messages", () => {
    expect(() => echoAnswer({ messages: [] })).toThrow(EchoRequestError);
    expect(() => echoAnswer([])).toThrow("not a JSON object");
  });
});
