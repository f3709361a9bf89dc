import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ITEM_TYPES } from "./items.js";
import { formatJsonSchema } from "./json-schema.js";

interface Node {
  readonly [key: string]: unknown;
}
const schema = formatJsonSchema() as Node;
const properties = schema["properties"] as Record<string, Node>;

describe("JSON Schema of format 1 (docs/format-1.schema.json)", () => {
  it("A6 is the checked-in file (test/generated-documents.test.ts also checks drift)", () => {
    const checkedIn = readFileSync(
      new URL("../../../../docs/format-1.schema.json", import.meta.url),
      "utf8",
    );
    expect(JSON.parse(checkedIn)).toEqual(schema);
  });

  it("A6 lists every top-level field and refuses undefined keys", () => {
    expect(Object.keys(properties).sort()).toEqual(
      [
        "approvalCards",
        "estimatedCost",
        "feedback",
        "formatVersion",
        "history",
        "items",
        "lastRoundUsage",
        "lintRuleCards",
        "model",
        "provider",
        "queued",
        "resolvedCards",
        "sentFacts",
        "skillCards",
        "unsent",
        "usage",
      ].sort(),
    );
    expect(schema["additionalProperties"]).toBe(false);
    expect(properties["formatVersion"]).toMatchObject({ const: 1 });
  });

  it("A6 describes all 13 item types", () => {
    const items = (properties["items"]?.["items"] as Node)["oneOf"] as Node[];
    const types = items.map(
      (item) => ((item["properties"] as Record<string, Node>)["type"] as Node)["const"],
    );
    expect(types).toEqual([...ITEM_TYPES]);
  });

  it("A6 writes the maps keyed by item id as objects with any key", () => {
    for (const name of ["feedback", "skillCards", "lintRuleCards", "approvalCards"]) {
      const map = properties[name] as Node;
      expect(map["type"]).toBe("object");
      expect(map["additionalProperties"]).toMatchObject({ type: "object" });
      expect(map["properties"]).toBeUndefined();
    }
    expect(properties["resolvedCards"]).toEqual({ type: "array", items: { type: "string" } });
  });

  it("A11 requires exactly one of the text and base64 keys of tool blocks", () => {
    const blocks = (
      ((properties["history"]?.["items"] as Node)["properties"] as Record<string, Node>)[
        "content"
      ] as Node
    )["items"] as Node;
    const variants = blocks["oneOf"] as Node[];
    const toolCall = variants.find(
      (variant) =>
        ((variant["properties"] as Record<string, Node>)["type"] as Node)["const"] === "toolCall",
    );
    expect(toolCall?.["oneOf"]).toEqual([
      { required: ["arguments"] },
      { required: ["argumentsBase64"] },
    ]);
    expect((toolCall?.["properties"] as Record<string, Node>)["argumentsBase64"]).toHaveProperty(
      "pattern",
    );
  });
});
