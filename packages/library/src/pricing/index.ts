/** verbatim/pricing: usage and cost types, the price table and the context-window table. */
export { ZERO_USAGE } from "./types.js";
export type { Cost, Usage } from "./types.js";
export { accumulateCost, addUsage, contextWindow, requestCost } from "./cost.js";
export type { RequestCostInput } from "./cost.js";
