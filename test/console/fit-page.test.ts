/**
 * The console's page size limit without blocking the event loop (issue 20): the library's one
 * cut (`fitPageInSteps`) run in slices gives what `fitPageToLimit` gives when it runs it at once
 * (SPEC B12), byte for byte, on random pages (any text: emoji, lone surrogates, control
 * characters, quotes), and the same refusal when a page cannot fit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fitPageYielding } from "../../packages/server/src/gateway/console/fit-page.js";
import { fitPageToLimit } from "../../packages/library/src/trajectory/paging.js";

// Any text, plain ASCII (sized without being written out: nothing in it is escaped), and
// ASCII with the characters JSON escapes.
const text = fc.oneof(
  fc.string({ unit: "binary", minLength: 10, maxLength: 300 }),
  fc.string({ unit: fc.constantFrom("a", " ", "~", "\u007f"), minLength: 10, maxLength: 300 }),
  fc.string({ unit: fc.constantFrom("a", '"', "\\", "\n"), minLength: 10, maxLength: 300 }),
);
const message = fc.oneof(
  fc.record({ role: fc.constant("user"), content: text }),
  fc.record({
    role: fc.constant("user"),
    content: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant("text"), text }),
        fc.record({
          type: fc.constant("image_url"),
          image_url: fc.record({ url: fc.constant("data:image/png;base64,AA==") }),
        }),
      ),
      { maxLength: 3 },
    ),
  }),
  fc.record({
    role: fc.constant("assistant"),
    content: fc.option(text, { nil: null }),
    tool_calls: fc.array(
      fc.record({
        id: fc.string({ maxLength: 8 }),
        type: fc.constant("function"),
        function: fc.record({ name: fc.string({ maxLength: 8 }), arguments: text }),
      }),
      { maxLength: 2 },
    ),
  }),
  fc.record({
    role: fc.constant("tool"),
    tool_call_id: fc.string({ maxLength: 8 }),
    content: text,
  }),
);

describe("console page size limit, yielding", () => {
  it("B12 cuts exactly as fitPageToLimit and refuses as it does", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { maxLength: 25 }),
        fc.double({ min: 0.4, max: 1.05, noNaN: true }),
        async (messages, fraction) => {
          const page = {
            messages,
            metadata: { redacted: false, content_truncated: false },
          } as never;
          // Limits around the page's own size: most pages are cut, some fit, some cannot fit.
          const limit = Math.floor(Buffer.byteLength(JSON.stringify(page)) * fraction);
          const before = JSON.stringify(page);
          let expected: unknown;
          let expectedError: unknown;
          try {
            expected = fitPageToLimit(page, { limitBytes: limit });
          } catch (error) {
            expectedError = error;
          }
          let actual: unknown;
          let actualError: unknown;
          try {
            actual = await fitPageYielding(page, limit);
          } catch (error) {
            actualError = error;
          }
          expect(JSON.stringify(page)).toBe(before);
          if (expectedError !== undefined) {
            expect(String(actualError)).toBe(String(expectedError));
          } else {
            expect(actualError).toBeUndefined();
            expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("B12 a page that fits is returned as it is", async () => {
    const page = {
      messages: [{ role: "user", content: "hi" }],
      metadata: { redacted: false, content_truncated: false },
    } as never;
    expect(await fitPageYielding(page, 1000)).toBe(page);
  });
});
