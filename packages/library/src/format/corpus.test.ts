import { readdirSync, readFileSync, statSync } from "node:fs";
import { sep } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../core/hash.js";
import { decodeConversation } from "./decode.js";
import { encodeConversation } from "./encode.js";

/**
 * The compatibility corpus of format 1 (test/fixtures/format-1/): files a reader of format 1
 * must read, and files it must refuse with a precise reason. manifest.json pins every file's
 * SHA-256 so that no one changes a fixture by accident, and what decoding it must give.
 */
interface Expectation {
  readonly ok: boolean;
  readonly kind?: string;
  readonly fieldProblem?: string;
  readonly path?: string;
}
interface Manifest {
  readonly files: Record<
    string,
    { readonly about: string; readonly sha256: string; readonly expect: Expectation }
  >;
}

const folder = new URL("../../../../test/fixtures/format-1/", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("manifest.json", folder), "utf8")) as Manifest;
const entries = Object.entries(manifest.files);
const read = (name: string) => readFileSync(new URL(name, folder));

function filesOnDisk(): string[] {
  return (readdirSync(folder, { recursive: true, encoding: "utf8" }) as string[])
    .map((name) => name.split(sep).join("/"))
    .filter((name) => name !== "manifest.json" && statSync(new URL(name, folder)).isFile())
    .sort();
}

describe("format 1 compatibility corpus", () => {
  it("A6 A14 every file in the corpus is in the manifest and every listed file exists", () => {
    expect(filesOnDisk()).toEqual(Object.keys(manifest.files).sort());
  });

  it("A6 A14 the corpus has valid files and every kind of unreadable file", () => {
    const valid = entries.filter(([, entry]) => entry.expect.ok);
    const kinds = new Set(entries.map(([, entry]) => entry.expect.kind));
    const problems = new Set(entries.map(([, entry]) => entry.expect.fieldProblem));
    expect(valid.length).toBeGreaterThanOrEqual(5);
    for (const kind of ["invalidJson", "notUtf8", "notAnObject", "missingVersion"]) {
      expect(kinds).toContain(kind);
    }
    for (const kind of ["newerVersion", "otherVersion", "invalidField"])
      expect(kinds).toContain(kind);
    for (const problem of [
      "unknownKey",
      "missingKey",
      "unknownType",
      "wrongType",
      "invalidValue",
    ]) {
      expect(problems).toContain(problem);
    }
  });

  for (const [name, entry] of entries) {
    describe(`${name}: ${entry.about}`, () => {
      it("A14 has the SHA-256 recorded in the manifest (fixtures never change by accident)", () => {
        expect(
          sha256Hex(read(name)),
          `${name} changed; if on purpose, review it and update manifest.json`,
        ).toBe(entry.sha256);
      });

      if (entry.expect.ok) {
        it("A6 decodes, and re-encodes to bytes that decode to the same conversation", () => {
          const result = decodeConversation(read(name));
          expect(result.ok ? "readable" : result.reason.message).toBe("readable");
          if (!result.ok) return;
          const bytes = encodeConversation(result.conversation);
          const again = decodeConversation(bytes);
          expect(again.ok && again.conversation).toEqual(result.conversation);
        });
      } else {
        it(`A14 is unreadable: ${entry.expect.kind} ${entry.expect.fieldProblem ?? ""} at ${entry.expect.path ?? "(no path)"}`, () => {
          const result = decodeConversation(read(name));
          expect(result.ok).toBe(false);
          if (result.ok) return;
          const { reason } = result;
          expect(reason.kind).toBe(entry.expect.kind);
          expect(reason.fieldProblem).toBe(entry.expect.fieldProblem);
          expect(reason.path).toBe(entry.expect.path);
          expect(reason.message.length).toBeGreaterThan(10);
          if (reason.path !== undefined && reason.kind !== "invalidJson") {
            expect(reason.message.startsWith(`${reason.path}: `)).toBe(true);
          }
        });
      }
    });
  }

  it("A2 the canonical files of the corpus are already canonical: encoding gives the same bytes", () => {
    const canonical = entries
      .map(([name]) => name)
      .filter((name) => name.startsWith("valid/") && name !== "valid/compact-layout.json");
    canonical.push("seed-example.canonical.json");
    for (const name of canonical) {
      const bytes = read(name);
      const result = decodeConversation(bytes);
      if (!result.ok) throw new Error(`${name}: ${result.reason.message}`);
      expect(encodeConversation(result.conversation).equals(bytes), name).toBe(true);
    }
  });

  it("A6 __proto__ and constructor as item ids are data in feedback and every card map", () => {
    const result = decodeConversation(read("valid/proto-ids.json"));
    if (!result.ok) throw new Error(result.reason.message);
    const conversation = result.conversation;
    expect([...conversation.feedback.keys()]).toEqual(["__proto__", "constructor"]);
    expect(conversation.feedback.get("__proto__")).toEqual({ rating: "good", reasons: [] });
    expect(conversation.skillCards.get("__proto__")).toEqual({ state: "dismissed" });
    expect(conversation.skillCards.get("constructor")).toEqual({ state: "pending" });
    expect(conversation.lintRuleCards.get("__proto__")).toEqual({ state: "pending" });
    expect(conversation.approvalCards.get("__proto__")).toEqual({ state: "pending" });
    expect(conversation.resolvedCards).toEqual(["__proto__", "constructor"]);
    expect(conversation.sentFacts[0]?.sections?.has("__proto__")).toBe(true);
    expect(conversation.items.map((item) => item.id)).toContain("__proto__");
    expect(({} as Record<string, unknown>)["state"]).toBeUndefined();
  });

  it("A14 a newer version names both versions", () => {
    const result = decodeConversation(read("bad/newer-version.json"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason.foundVersion).toBe(2);
    expect(result.reason.message).toMatch(/format 2, newer than format 1/);
  });

  it("A14 a duplicate key names its line and column", () => {
    const result = decodeConversation(read("bad/duplicate-key.json"));
    if (result.ok) throw new Error("decoded");
    expect(result.reason.message).toMatch(/line \d+, column 3 .*"model" appears twice/);
  });
});
