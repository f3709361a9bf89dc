import { z } from "zod";

/**
 * Token counts and cost of model calls, as the agent runtime that made them reported them
 * (docs/trajectories.md, "Usage and cost"). On an item: the one model call that produced it. In
 * a job's result (`usage`): the totals the source recorded for the run, one entry per model.
 * Numbers are the source's own: whether `input_tokens` counts cache reads follows the source.
 */
const count = z.int().min(0);

/** The zod schema of one model call's reported usage. */
export const modelUsageSchema = z.strictObject({
  /** The model the source named, as it named it. */
  model: z.string().optional(),
  input_tokens: count.optional(),
  output_tokens: count.optional(),
  total_tokens: count.optional(),
  cache_read_tokens: count.optional(),
  cache_write_tokens: count.optional(),
  reasoning_tokens: count.optional(),
  /** US dollars. */
  cost_usd: z.number().min(0).optional(),
  /** How many model calls the numbers cover, when the source says. */
  calls: count.optional(),
});

export type ModelUsage = z.output<typeof modelUsageSchema>;

/** The token counts a model usage record may hold. */
export const MODEL_USAGE_COUNTS = [
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "calls",
] as const;

type Writable = { -readonly [K in keyof ModelUsage]: ModelUsage[K] };

/**
 * A usage from the numbers a source gave: counts that are not non-negative integers and costs
 * that are not non-negative numbers are left out; undefined when nothing is left.
 */
export function usageOf(numbers: {
  readonly [K in keyof ModelUsage]?: unknown;
}): ModelUsage | undefined {
  const usage: Writable = {};
  if (typeof numbers.model === "string" && numbers.model !== "") usage.model = numbers.model;
  for (const key of MODEL_USAGE_COUNTS) {
    const value = numbers[key];
    if (typeof value === "number" && Number.isInteger(value) && value >= 0) usage[key] = value;
  }
  const cost = numbers.cost_usd;
  if (typeof cost === "number" && Number.isFinite(cost) && cost >= 0) usage.cost_usd = cost;
  const keys = Object.keys(usage);
  return keys.length === 0 || (keys.length === 1 && usage.model !== undefined) ? undefined : usage;
}

/**
 * The sum of usages: each number summed over the usages that have it (absent when none has),
 * `calls` counting a usage without its own `calls` as one call; `model` kept when all agree.
 */
export function sumUsage(usages: readonly ModelUsage[]): ModelUsage | undefined {
  if (usages.length === 0) return undefined;
  const total: Writable = {};
  const models = new Set(usages.map((usage) => usage.model));
  const only = [...models][0];
  if (models.size === 1 && only !== undefined) total.model = only;
  for (const key of MODEL_USAGE_COUNTS) {
    for (const usage of usages) {
      const value = key === "calls" ? (usage.calls ?? 1) : usage[key];
      if (value !== undefined) total[key] = (total[key] ?? 0) + value;
    }
  }
  for (const usage of usages)
    if (usage.cost_usd !== undefined) total.cost_usd = (total.cost_usd ?? 0) + usage.cost_usd;
  return total;
}
