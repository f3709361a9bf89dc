import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createSanitizer, defaultSanitizer, type TrajectoryItem } from "./index.js";

// The corpus is hand-made: fake secrets in the shapes the providers document (none is a live
// credential) and look-alikes that a sanitizer must leave alone.
const corpus = JSON.parse(
  readFileSync(
    new URL("../../../../test/fixtures/trajectory/secrets-corpus.json", import.meta.url),
    "utf8",
  ),
) as { secrets: { rule: string; text: string }[]; look_alikes: string[] };

describe("sanitizer", () => {
  it.each(corpus.secrets)("B7 redacts a $rule", ({ rule, text }) => {
    const result = defaultSanitizer.sanitizeText(`before ${text} after`);
    expect(result.redacted).toBe(true);
    expect(result.value).not.toContain(text.replace(/^[Bb]earer /, ""));
    expect(result.value).toContain(`[redacted:${rule}]`);
    expect(result.value.startsWith("before ")).toBe(true);
    expect(result.value.endsWith(" after")).toBe(true);
  });

  it.each(corpus.look_alikes)("B7 leaves the look-alike %j unredacted", (text) => {
    expect(defaultSanitizer.sanitizeText(text)).toEqual({ value: text, redacted: false });
  });

  it("B7 keeps the Bearer scheme word and redacts only the token", () => {
    const token = corpus.secrets.find((entry) => entry.rule === "bearer_token")?.text ?? "";
    expect(defaultSanitizer.sanitizeText(`Authorization: ${token}`).value).toBe(
      "Authorization: Bearer [redacted:bearer_token]",
    );
  });

  it("B7 redacts secrets in nested fields of an item and records that it did", () => {
    const secrets = corpus.secrets.map((entry) => entry.text);
    const item: TrajectoryItem = {
      type: "file_change",
      call_id: "call-1",
      changes: [
        { path: "config/.env", kind: "update", diff: `+KEY=${secrets[0]}\n+AWS=${secrets[6]}` },
        { path: "notes.md", kind: "add", diff: `+${secrets[11]} and ghp_short123` },
      ],
      status: "completed",
      execution_mechanism: "local_dynamic",
    };
    const result = defaultSanitizer.sanitizeItem(item);
    expect(result.redacted).toBe(true);
    expect(result.value.redacted).toBe(true);
    const text = JSON.stringify(result.value);
    for (const secret of [secrets[0], secrets[6], secrets[11]]) expect(text).not.toContain(secret);
    expect(text).toContain("ghp_short123");
    expect(text).toContain("config/.env");
    // The input is not changed in place.
    expect(JSON.stringify(item)).toContain(secrets[0]);
  });

  it("B7 leaves an item without secrets as it is (same object, no redacted flag)", () => {
    const item: TrajectoryItem = { type: "agent_message", text: "sk-proj-1234 is not a key" };
    const result = defaultSanitizer.sanitizeItem(item);
    expect(result).toEqual({ value: item, redacted: false });
    expect(result.value).toBe(item);
  });

  it("B7 every secret of the corpus is found at any depth of a JSON value", () => {
    const nested = { a: [{ b: { c: corpus.secrets.map((entry) => ({ d: entry.text })) } }] };
    const result = defaultSanitizer.sanitizeValue(nested);
    expect(result.redacted).toBe(true);
    const text = JSON.stringify(result.value);
    expect(text.match(/\[redacted:/g)?.length).toBe(corpus.secrets.length);
  });

  it("is configurable: extra rules, own rules, own replacement", () => {
    const sanitizer = createSanitizer({
      extraRules: [{ name: "internal", pattern: /INT-[0-9]{6}/g }],
      replacement: (rule) => `<${rule.name}>`,
    });
    expect(sanitizer.sanitizeText("id INT-123456 and AKIA2OGYBAH6QEXAMPLE").value).toBe(
      "id <internal> and <aws_access_key_id>",
    );
    const only = createSanitizer({ rules: [{ name: "x", pattern: /secret/g }] });
    expect(only.sanitizeText("secret AKIA2OGYBAH6QEXAMPLE").value).toBe(
      "[redacted:x] AKIA2OGYBAH6QEXAMPLE",
    );
    expect(() => createSanitizer({ rules: [{ name: "bad", pattern: /x/ }] })).toThrow(/g flag/);
  });

  it("keeps __proto__ as a plain key", () => {
    const value = JSON.parse('{"__proto__": {"k": "ghp_' + "a".repeat(36) + '"}}') as object;
    const result = defaultSanitizer.sanitizeValue(value);
    expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype);
    expect(JSON.stringify(result.value)).toBe('{"__proto__":{"k":"[redacted:github_token]"}}');
  });
});
