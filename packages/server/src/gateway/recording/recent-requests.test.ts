import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { safeParseStrictJson } from "verbatim-llm/core";
import { RecentRequests } from "./recent-requests.js";

/** The value the strict parser gives for the whole body, or undefined when it refuses it. */
function parsedWhole(bytes: Buffer): unknown {
  const parsed = safeParseStrictJson(bytes.toString("utf8"));
  return parsed.ok ? parsed.value : undefined;
}

/** The body's value as the routes read it: continued from a recent request, else whole. */
function parse(requests: RecentRequests, subject: string, bytes: Buffer, key = "messages") {
  const continued = requests.continued(subject, bytes, key);
  if (continued !== undefined) return { value: continued as unknown, continued: true };
  const value = parsedWhole(bytes);
  requests.remember(subject, bytes, value, key);
  return { value, continued: false };
}

/** Equal values, with the same key order and the strict parser's prototypes. */
function expectSameValue(actual: unknown, expected: unknown): void {
  expect(actual).toStrictEqual(expected);
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  expect(Object.getPrototypeOf(actual)).toBe(Object.getPrototypeOf(expected));
}

const message = fc.record({
  role: fc.constantFrom("user", "assistant"),
  content: fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.array(fc.record({ type: fc.constant("text"), text: fc.string({ maxLength: 30 }) }), {
      maxLength: 3,
    }),
    fc.integer(),
  ),
});

/** A session's next request from its last: messages added, cut or rewritten, its tail changed. */
const change = fc.record({
  add: fc.array(message, { maxLength: 3 }),
  cut: fc.nat(6),
  rewriteLast: fc.option(message, { nil: undefined }),
  system: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
  spaces: fc.constantFrom(undefined, 1, "\t"),
});

describe("issue 33: a request parsed from where it parts from its session's previous one", () => {
  it("gives the strict parser's value of the whole body, for random sessions", () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 6 }),
        fc.array(change, { maxLength: 10 }),
        (first, changes) => {
          const requests = new RecentRequests(32 * 1024 * 1024, 4, 0);
          let messages: unknown[] = first;
          let system = "be brief";
          let continued = 0;
          for (const step of [undefined, ...changes]) {
            if (step !== undefined) {
              messages = [...messages.slice(0, messages.length - step.cut), ...step.add];
              if (step.rewriteLast !== undefined && messages.length > 0) {
                messages = [...messages.slice(0, -1), step.rewriteLast];
              }
              system = step.system ?? system;
            }
            const body = { model: "m", messages, system, max_tokens: 5 };
            const bytes = Buffer.from(JSON.stringify(body, null, step?.spaces));
            const read = parse(requests, "subject", bytes);
            expectSameValue(read.value, parsedWhole(bytes));
            if (read.continued) continued++;
          }
          return continued >= 0;
        },
      ),
      { numRuns: 300 },
    );
  });

  it("is used when the next request repeats the previous one's messages", () => {
    const requests = new RecentRequests(32 * 1024 * 1024, 4, 0);
    const history = [{ role: "user", content: "hello" }];
    const body = (messages: unknown[]) =>
      Buffer.from(JSON.stringify({ model: "m", messages, tools: [{ name: "read" }] }));
    expect(parse(requests, "subject", body(history)).continued).toBe(false);
    const next = [...history, { role: "assistant", content: "hi" }, { role: "user", content: "?" }];
    const read = parse(requests, "subject", body(next));
    expect(read.continued).toBe(true);
    expectSameValue(read.value, parsedWhole(body(next)));
    // The messages before the new ones are the previous request's values.
    const previous = parse(
      requests,
      "subject",
      body([...next, { role: "assistant", content: "!" }]),
    );
    expect((previous.value as { messages: unknown[] }).messages[1]).toBe(
      (read.value as { messages: unknown[] }).messages[1],
    );
    // Another subject's requests are not its bases.
    expect(parse(requests, "other", body(next)).continued).toBe(false);
  });

  it("takes the members after the messages (system prompt, tools) as they were when their bytes are the same", () => {
    const requests = new RecentRequests(32 * 1024 * 1024, 4, 0);
    const tools = [{ name: "read", input_schema: { type: "object" } }];
    const body = (messages: unknown[], maxTokens = 5) =>
      Buffer.from(
        JSON.stringify({
          model: "m",
          messages,
          system: [{ text: "s" }],
          tools,
          max_tokens: maxTokens,
        }),
      );
    const history = [{ role: "user", content: "hello" }];
    const first = parse(requests, "subject", body(history));
    const next = [...history, { role: "assistant", content: "hi" }, { role: "user", content: "?" }];
    const second = parse(requests, "subject", body(next));
    expect(second.continued).toBe(true);
    expectSameValue(second.value, parsedWhole(body(next)));
    const toolsOf = (read: { value: unknown }) => (read.value as { tools: unknown }).tools;
    expect(toolsOf(second)).toBe(toolsOf(first));
    // No message added, the same tail: still the whole body's value.
    const again = parse(requests, "subject", body(next));
    expectSameValue(again.value, parsedWhole(body(next)));
    expect(toolsOf(again)).toBe(toolsOf(first));
    // A tail that changed is parsed again.
    const changed = parse(
      requests,
      "subject",
      body([...next, { role: "assistant", content: "!" }], 9),
    );
    expect(changed.continued).toBe(true);
    expectSameValue(
      changed.value,
      parsedWhole(body([...next, { role: "assistant", content: "!" }], 9)),
    );
    expect(toolsOf(changed)).not.toBe(toolsOf(first));
    // New messages that are not JSON, before a tail that is the same, are left to the whole parse.
    const broken = Buffer.from(
      body(next)
        .toString("utf8")
        .replace('{"role":"user","content":"?"}', '{"role":"user" "content":"?"}'),
    );
    const read = parse(requests, "subject", broken);
    expect(read.continued).toBe(false);
    expect(read.value).toBeUndefined();
  });

  it("continues Gemini requests by their contents, the instruction and tools after them", () => {
    const requests = new RecentRequests(32 * 1024 * 1024, 4, 0);
    const body = (contents: unknown[]) =>
      Buffer.from(
        JSON.stringify({
          contents,
          systemInstruction: { parts: [{ text: "be brief" }] },
          tools: [{ functionDeclarations: [{ name: "list_directory" }] }],
          generationConfig: { temperature: 0 },
        }),
      );
    const history = [{ role: "user", parts: [{ text: "list it" }] }];
    const first = parse(requests, "subject", body(history), "contents");
    expect(first.continued).toBe(false);
    const next = [
      ...history,
      { role: "model", parts: [{ functionCall: { name: "list_directory", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "list_directory", response: {} } }] },
    ];
    const second = parse(requests, "subject", body(next), "contents");
    expect(second.continued).toBe(true);
    expectSameValue(second.value, parsedWhole(body(next)));
    const toolsOf = (read: { value: unknown }) => (read.value as { tools: unknown }).tools;
    expect(toolsOf(second)).toBe(toolsOf(first));
    // A body of the other member is not continued from a Gemini request, nor the reverse.
    expect(parse(requests, "subject", body(next), "messages").continued).toBe(false);
  });

  it("leaves to the whole parse a body whose tail is not what the whole body's parse accepts", () => {
    const head = '{"model":"m","messages":[{"role":"user","content":"one"}';
    const cases = [
      // A trailing comma, a key of the head repeated, a number the new body continues, a
      // missing comma, bytes that are not UTF-8, JSON that does not end.
      `${head},]}`,
      `${head}],"model":"n"}`,
      `${head},{"role":"user","content":"two"}],"messages":[]}`,
      `${head}{"role":"user","content":"two"}]}`,
      `${head},{"role":"user","content":"\u00ff"}]}`,
      `${head},{"role":"user","content":"two"}]`,
      `${head}]} trailing`,
    ];
    for (const text of cases) {
      const requests = new RecentRequests(32 * 1024 * 1024, 4, 0);
      parse(requests, "subject", Buffer.from(`${head}]}`));
      const bytes = Buffer.from(text);
      if (text.includes("\u00ff")) bytes[bytes.indexOf(0xc3)] = 0xff;
      const read = parse(requests, "subject", bytes);
      expect(read.continued).toBe(false);
      expect(read.value).toStrictEqual(parsedWhole(bytes));
    }
    const numbers = new RecentRequests(32 * 1024 * 1024, 4, 0);
    parse(numbers, "subject", Buffer.from('{"messages":[1,123]}'));
    expect(parse(numbers, "subject", Buffer.from('{"messages":[1,1234]}')).value).toStrictEqual(
      parsedWhole(Buffer.from('{"messages":[1,1234]}')),
    );
  });

  it("keeps at most its bytes", () => {
    const requests = new RecentRequests(4000, 4, 0);
    for (let index = 0; index < 20; index++) {
      const bytes = Buffer.from(
        JSON.stringify({ messages: [{ role: "user", content: "x".repeat(300 + index) }] }),
      );
      requests.remember(`subject ${index}`, bytes, parsedWhole(bytes));
    }
    expect(requests.size.bytes).toBeLessThanOrEqual(4000);
  });
});
