import type { Cost } from "../format/conversation-schema.js";
import { accumulateCost, roundDollars } from "../pricing/cost.js";

/**
 * Combines the conversation's cost so far with one more charge (A8):
 * reported + reported → reported; reported and estimated mixed → estimated, `partial`;
 * anything with unknown → unknown; notBilled adds nothing to a billed total.
 * `first` says the conversation had no charge before (its cost reads `unknown` then).
 */
export function addCost(total: Cost, charge: Cost, first: boolean): Cost {
  return first ? charge : accumulateCost(total, charge);
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
