/**
 * The pricing layer's Usage and Cost are the format's (A7, A8): a parsed round's usage and an
 * accumulated cost validate against the format-1 schemas, and the types are assignable both
 * ways (checked by the compiler).
 */
import { describe, expect, it } from "vitest";
import type {
  Cost as FormatCost,
  Usage as FormatUsage,
} from "../../packages/library/src/format/conversation-schema.js";
import { costSchema, usageSchema } from "../../packages/library/src/format/conversation-schema.js";
import { accumulateCost, type Cost, type Usage } from "../../packages/library/src/pricing/index.js";

const toFormatUsage = (usage: Usage): FormatUsage => usage;
const fromFormatUsage = (usage: FormatUsage): Usage => usage;
const toFormatCost = (cost: Cost): FormatCost => cost;
const fromFormatCost = (cost: FormatCost): Cost => cost;

describe("pricing and format types", () => {
  it("A7 A8 usage and cost values of the pricing layer validate as format 1", () => {
    const usage: Usage = {
      input: 1,
      output: 2,
      cacheRead: 3,
      cacheWrite: 4,
      webSearchRequests: 0,
      cacheWrite1h: 4,
      reportedCost: 0.1,
    };
    expect(usageSchema.parse(toFormatUsage(usage))).toEqual(fromFormatUsage(usage));
    const cost = accumulateCost(
      { kind: "reported", dollars: 1 },
      { kind: "estimated", dollars: 2 },
    );
    expect(costSchema.parse(toFormatCost(cost))).toEqual(fromFormatCost(cost));
  });
});
