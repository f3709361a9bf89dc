import { describe, expect, it } from "vitest";
import { geminiMessagesOf } from "./gemini-messages.js";

// Issue 35 item 1: a Gemini answer is stored once. Its function call, which the answer gave no
// id, gets the same id in the next request, where the client (Gemini CLI) named it itself, and
// the function response that names the client's id answers that call.

const call = { name: "list_directory", args: { dir_path: "." } };

function ids(contents: unknown[], index: number) {
  return geminiMessagesOf(contents, index).flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === "toolCall" ? [block.id] : block.type === "toolResult" ? [block.callID] : [],
    ),
  );
}

describe("Gemini function call ids", () => {
  it("names a call by its content, whatever id the client gave it", () => {
    const question = { role: "user", parts: [{ text: "list it" }] };
    const answered = [question, { role: "model", parts: [{ functionCall: call }] }];
    const echoed = [
      question,
      {
        role: "model",
        parts: [{ functionCall: { ...call, id: "list_directory_1765000000000_0" } }],
      },
      {
        role: "user",
        parts: [
          {
            functionResponse: {
              id: "list_directory_1765000000000_0",
              name: "list_directory",
              response: { output: "a.txt" },
            },
          },
        ],
      },
    ];
    const [fromAnswer] = ids(answered, 1);
    expect(fromAnswer).toMatch(/^call_/);
    expect(ids(echoed, 1)).toEqual([fromAnswer]);
    expect(ids(echoed, 2)).toEqual([fromAnswer]);
  });

  it("answers calls without ids by name, in order, and keeps an id no call has", () => {
    const contents = [
      { role: "user", parts: [{ text: "two" }] },
      { role: "model", parts: [{ functionCall: call }, { functionCall: { ...call, args: {} } }] },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "list_directory", response: {} } },
          { functionResponse: { name: "list_directory", response: {} } },
          { functionResponse: { id: "unknown", name: "other", response: {} } },
        ],
      },
    ];
    const calls = ids(contents, 1);
    expect(new Set(calls).size).toBe(2);
    expect(ids(contents, 2)).toEqual([...calls, "unknown"]);
  });
});
