import type { Cost, Usage } from "../format/conversation-schema.js";

/** Adds one request's usage to a running total; optional keys stay absent unless present. */
export function addUsage(total: Usage, round: Usage): Usage {
  const sum: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    webSearchRequests: number;
    cacheWrite1h?: number;
    reportedCost?: number;
  } = {
    input: total.input + round.input,
    output: total.output + round.output,
    cacheRead: total.cacheRead + round.cacheRead,
    cacheWrite: total.cacheWrite + round.cacheWrite,
    webSearchRequests: total.webSearchRequests + round.webSearchRequests,
  };
  if (total.cacheWrite1h !== undefined || round.cacheWrite1h !== undefined) {
    sum.cacheWrite1h = (total.cacheWrite1h ?? 0) + (round.cacheWrite1h ?? 0);
  }
  if (total.reportedCost !== undefined || round.reportedCost !== undefined) {
    sum.reportedCost = roundDollars((total.reportedCost ?? 0) + (round.reportedCost ?? 0));
  }
  return sum;
}

/** A request's total input: what fills the context (A18). */
export function totalInput(usage: Usage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite;
}

/**
 * Combines the conversation's cost so far with one more charge (A8):
 * reported + reported → reported; reported and estimated mixed → estimated, `partial`;
 * anything with unknown → unknown; notBilled adds nothing to a billed total.
 * `first` says the conversation had no charge before (its cost reads `unknown` then).
 */
export function addCost(total: Cost, charge: Cost, first: boolean): Cost {
  if (first) return charge;
  if (charge.kind === "notBilled") return total;
  if (total.kind === "notBilled") return charge;
  if (total.kind === "unknown" || charge.kind === "unknown") return { kind: "unknown" };
  const dollars = roundDollars(total.dollars + charge.dollars);
  if (total.kind === "reported" && charge.kind === "reported") return { kind: "reported", dollars };
  const partial =
    total.kind !== charge.kind ||
    (total.kind === "estimated" && total.partial === true) ||
    (charge.kind === "estimated" && charge.partial === true);
  return partial ? { kind: "estimated", dollars, partial: true } : { kind: "estimated", dollars };
}

/** Adds dollars priced from the table (generated images, A8) to a total, keeping its kind. */
export function addEstimatedDollars(total: Cost, dollars: number, first: boolean): Cost {
  if (first || total.kind === "notBilled")
    return { kind: "estimated", dollars: roundDollars(dollars) };
  if (total.kind === "unknown") return total;
  const sum = roundDollars(total.dollars + dollars);
  if (total.kind === "reported") return { kind: "estimated", dollars: sum, partial: true };
  return total.partial === true
    ? { kind: "estimated", dollars: sum, partial: true }
    : { kind: "estimated", dollars: sum };
}

/** Dollars to 10 decimal places, so sums of float prices stay stable across saves. */
export function roundDollars(dollars: number): number {
  return Math.round(dollars * 1e10) / 1e10;
}
