import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allErrorCodes } from "../packages/library/src/core/error-codes.js";
import { generatedDocuments } from "../scripts/generated-documents.js";

describe("generated documents", () => {
  for (const document of generatedDocuments()) {
    it(`${document.path} matches a fresh generation (run npm run docs:generate)`, async () => {
      const checkedIn = readFileSync(new URL(`../${document.path}`, import.meta.url), "utf8");
      expect(checkedIn).toBe(await document.content());
    });
  }

  it("every registered error code is documented and every documented code is registered", () => {
    const documented = new Set(
      [
        ...readFileSync(new URL("../docs/errors.md", import.meta.url), "utf8").matchAll(
          /^\| `([a-z0-9_]+)` \|/gm,
        ),
      ].map((match) => match[1]),
    );
    const registered = new Set(allErrorCodes().map((definition) => definition.code));
    expect([...registered].filter((code) => !documented.has(code))).toEqual([]);
    expect([...documented].filter((code) => !registered.has(code as string))).toEqual([]);
  });
});
