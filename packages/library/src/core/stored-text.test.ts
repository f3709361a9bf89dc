import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anyText } from "../../../../test/support/text-arbitraries.js";
import { isWellFormedText } from "./bytes.js";
import {
  describeStoredTextFault,
  findStoredTextFault,
  isStorableText,
  repairStoredText,
  storedTextFaultWhere,
  storedTextProblem,
} from "./stored-text.js";

describe("the stored-text rule", () => {
  it("refuses lone surrogates and NUL, first one first, and accepts pairs", () => {
    expect(storedTextProblem("plain 😀 text")).toBeUndefined();
    expect(storedTextProblem("")).toBeUndefined();
    expect(storedTextProblem("key-\ud800")).toEqual({ problem: "lone_surrogate", index: 4 });
    expect(storedTextProblem("key-\udfff")).toEqual({ problem: "lone_surrogate", index: 4 });
    expect(storedTextProblem("a\u0000b")).toEqual({ problem: "nul", index: 1 });
    expect(storedTextProblem("\ud800\u0000")).toEqual({ problem: "lone_surrogate", index: 0 });
    expect(storedTextProblem("\u0000\ud800")).toEqual({ problem: "nul", index: 0 });
  });

  it("walks every string and key of a JSON value and names the path of the first fault", () => {
    const value = JSON.parse(
      '{"a":[1,true,null,{"b":"fine"}],"c":{"d":["ok","x\\u0000"]},"e":"\\ud800"}',
    ) as unknown;
    const fault = findStoredTextFault(value);
    expect(fault).toEqual({ path: ["c", "d", 1], problem: "nul", index: 1, inKey: false });
    expect(storedTextFaultWhere("body", fault!)).toBe("body.c.d[1]");
    expect(findStoredTextFault({ "k\udc00": 1 })).toMatchObject({
      path: ["k\udc00"],
      problem: "lone_surrogate",
      inKey: true,
    });
    const proto = findStoredTextFault(JSON.parse('{"m":{"__proto__":"x"}}'));
    expect(proto).toEqual({ path: ["m", "__proto__"], problem: "prototype_key", inKey: true });
    expect(describeStoredTextFault(proto!)).toContain('"__proto__"');
    expect(findStoredTextFault({ constructor: "x", prototype: ["y"] })).toBeUndefined();
    expect(findStoredTextFault([1, 2.5, false, null, "text"])).toBeUndefined();
  });

  it("names awkward keys so a reader can find them", () => {
    const fault = findStoredTextFault({ "a key": { "b\u0000": 1 } });
    expect(storedTextFaultWhere("body", fault!)).toBe('body["a key"]["b\\u0000"]');
  });

  it("walks deep values without recursion", () => {
    let deep: unknown = "bad\ud800";
    for (let depth = 0; depth < 100_000; depth++) deep = [deep];
    expect(findStoredTextFault(deep)?.path.length).toBe(100_000);
  });

  it("walks a value with a cycle or a shared part once, and still finds a fault in it", () => {
    const shared = { text: "fine" };
    const cyclic: Record<string, unknown> = { a: shared, b: shared };
    cyclic["self"] = cyclic;
    expect(findStoredTextFault(cyclic)).toBeUndefined();
    cyclic["bad"] = ["x\u0000"];
    expect(findStoredTextFault(cyclic)?.path).toEqual(["bad", 0]);
  });

  it("a string is storable exactly when it is well-formed and has no NUL", () => {
    fc.assert(
      fc.property(anyText({ maxLength: 20 }), (text) => {
        const storable = isWellFormedText(text) && !text.includes("\u0000");
        expect(isStorableText(text)).toBe(storable);
        expect(storedTextProblem(text) === undefined).toBe(storable);
        expect(findStoredTextFault({ [text]: text }) === undefined).toBe(
          storable && text !== "__proto__",
        );
      }),
    );
  });

  it("repair makes any text storable, changes only what breaks the rule, and keeps storable text", () => {
    expect(repairStoredText("a\ud800b\u0000c\udfff😀")).toBe("a\ufffdb\ufffdc\ufffd😀");
    fc.assert(
      fc.property(anyText({ maxLength: 20 }), (text) => {
        const repaired = repairStoredText(text);
        expect(isStorableText(repaired)).toBe(true);
        expect(repaired.length).toBe(text.length);
        expect(repairStoredText(repaired)).toBe(repaired);
        if (isStorableText(text)) expect(repaired).toBe(text);
      }),
    );
  });
});
