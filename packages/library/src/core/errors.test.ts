import { describe, expect, it } from "vitest";
import {
  allErrorCodes,
  errorCodeDefinition,
  errorCodeGroups,
  httpStatusOf,
  registerErrorCodes,
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
    const grouped = [...errorCodeGroups().values()].flat();
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

  it("knows only the library's own layers when the server package is not loaded (issue 16)", () => {
    const groups = [...errorCodeGroups().keys()];
    expect(groups).toContain("trajectory");
    expect(groups.filter((group) => ["store", "gateway", "server"].includes(group))).toEqual([]);
    expect(allErrorCodes().some((definition) => definition.code === "store_unreachable")).toBe(
      false,
    );
    // The type knows the server's codes here (one program holds both packages); the run time
    // does not, and says what to do.
    expect(() => httpStatusOf("store_unreachable")).toThrow(
      /store_unreachable is not registered: .*import it first/,
    );
  });

  it("refuses a code registered twice and a group registered again with other codes", () => {
    const before = allErrorCodes().length;
    const general = errorCodeGroups().get("general") ?? [];
    // The same group with the same codes again (a second copy of its package) changes nothing.
    registerErrorCodes("general", general as never);
    expect(allErrorCodes().length).toBe(before);
    expect(() => registerErrorCodes("general", general.slice(1) as never)).toThrow(
      /group "general" is registered twice with different codes/,
    );
    const stolen = [{ ...general[0], code: "invalid_json" }];
    expect(() => registerErrorCodes("store", stolen as never)).toThrow(
      /invalid_json is registered twice \(group "general" and group "store"\)/,
    );
    const twice = [general[0], general[0]];
    expect(() => registerErrorCodes("gateway", twice as never)).toThrow(/registered twice/);
    const badStatus = [{ ...general[0], code: "fresh_code", httpStatus: 200 }];
    expect(() => registerErrorCodes("server", badStatus as never)).toThrow(
      /fresh_code \(group "server", entry 0\) cannot be registered: its HTTP status/,
    );
    expect(allErrorCodes().length).toBe(before);
    expect(errorCodeGroups().has("store")).toBe(false);
  });
});
