import { describe, expect, it } from "vitest";
import { VerbatimError } from "verbatim-llm/core";
import { SLICED_PARSE_FROM_BYTES, parseJsonBodyText } from "./json-body.js";

/** A JSON body of at least `bytes` bytes whose strings hold multi-byte characters at every offset. */
function largeBody(bytes: number, prefix = ""): Buffer {
  const words = ["é", "€", "😀", "abc", "\u{10FFFF}", "x"];
  const items: string[] = [];
  let size = 0;
  for (let index = 0; size < bytes; index++) {
    const text = words.slice(0, 1 + (index % words.length)).join("");
    items.push(text);
    size += Buffer.byteLength(text) + 3;
  }
  return Buffer.from(prefix + JSON.stringify({ items }), "utf8");
}

describe("parseJsonBodyText (issue 31 item 5: a large body is decoded in slices)", () => {
  it("gives the text and value Buffer#toString and JSON.parse give, whatever falls on a slice edge", async () => {
    for (const shift of [0, 1, 2, 3]) {
      const body = largeBody(3 * SLICED_PARSE_FROM_BYTES + shift);
      expect(body.length).toBeGreaterThanOrEqual(SLICED_PARSE_FROM_BYTES);
      const { text, value } = await parseJsonBodyText(body);
      expect(text).toBe(body.toString("utf8"));
      expect(value).toEqual(JSON.parse(body.toString("utf8")));
    }
  });

  it("reads a byte-order mark as text (and so refuses it) in both paths alike", async () => {
    const where = async (body: Buffer) =>
      ((await parseJsonBodyText(body).catch((caught: unknown) => caught)) as VerbatimError).where;
    const large = await where(largeBody(SLICED_PARSE_FROM_BYTES, "\uFEFF"));
    expect(large).toBe(await where(Buffer.from("\uFEFF{}", "utf8")));
    expect(large).toMatch(/line 1, column 1/);
  });

  it("names the offset of the first bad byte of a large body, wherever it is", async () => {
    const body = largeBody(2 * SLICED_PARSE_FROM_BYTES);
    for (const offset of [
      5,
      SLICED_PARSE_FROM_BYTES - 1,
      SLICED_PARSE_FROM_BYTES + 7,
      body.length - 3,
    ]) {
      const bad = Buffer.from(body);
      bad[offset] = 0xff;
      const error = await parseJsonBodyText(bad).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VerbatimError);
      expect(error).toMatchObject({ code: "invalid_utf8", details: { byte_offset: offset } });
    }
  });

  it("refuses a large body cut inside a character", async () => {
    const body = Buffer.concat([largeBody(SLICED_PARSE_FROM_BYTES), Buffer.from([0xe2, 0x82])]);
    await expect(parseJsonBodyText(body)).rejects.toMatchObject({
      code: "invalid_utf8",
      details: { byte_offset: body.length - 2 },
    });
  });
});
