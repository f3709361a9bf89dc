import { describe, expect, it } from "vitest";
import {
  allErrorCodes,
  errorCodeDefinition,
  errorCodeGroups,
  httpStatusOf,
} from "./error-codes.js";
import { VerbatimError, isVerbatimError } from "./errors.js";

describe("VerbatimError and the code registry", () => {
  it("carries a stable code, where and hint, and describes itself on one line", () => {
    const error = new VerbatimError("invalid_json", "body is not valid JSON", {
      where: "line 1, column 2, $",
      hint: "Fix the JSON at that position",
      details: { line: 1 },
    });
    expect(error).toBeInstanceOf(Error);
    expect(isVerbatimError(error)).toBe(true);
    expect(isVerbatimError(new Error("x"))).toBe(false);
    expect(error.name).toBe("VerbatimError");
    expect(error.code).toBe("invalid_json");
    expect(error.details).toEqual({ line: 1 });
    expect(error.describe()).toBe(
      "body is not valid JSON (at line 1, column 2, $). Fix the JSON at that position",
    );
    expect(new VerbatimError("internal_error", "boom").describe()).toBe("boom");
  });

  it("keeps the cause", () => {
    const cause = new Error("disk full");
    expect(new VerbatimError("internal_error", "save failed", { cause }).cause).toBe(cause);
  });

  it("registers every code once, in snake case, with a status, a meaning and a remedy", () => {
    const codes = allErrorCodes();
    const grouped = Object.values(errorCodeGroups).flat();
    expect(codes.length).toBe(grouped.length);
    for (const definition of codes) {
      expect(definition.code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(definition.httpStatus).toBeGreaterThanOrEqual(400);
      expect(definition.httpStatus).toBeLessThan(600);
      expect(definition.meaning.length).toBeGreaterThan(10);
      expect(definition.remedy.length).toBeGreaterThan(10);
    }
  });

  it("maps codes to HTTP statuses", () => {
    expect(httpStatusOf("invalid_json")).toBe(400);
    expect(httpStatusOf("path_not_found")).toBe(404);
    expect(httpStatusOf("internal_error")).toBe(500);
    expect(errorCodeDefinition("usage_error").code).toBe("usage_error");
  });
});
