/**
 * Usage and cost of a job's model calls as the job page gives them (docs/trajectories.md,
 * "Usage and cost"): the source's own numbers, shown as they are.
 */
export interface JobUsage {
  readonly model?: string;
  readonly input_tokens?: number;
  readonly output_tokens?: number;
  readonly total_tokens?: number;
  readonly cache_read_tokens?: number;
  readonly cache_write_tokens?: number;
  readonly reasoning_tokens?: number;
  readonly cost_usd?: number;
  readonly calls?: number;
}

const LABELS: readonly (readonly [keyof JobUsage, string])[] = [
  ["calls", "calls"],
  ["input_tokens", "in"],
  ["cache_read_tokens", "cache read"],
  ["cache_write_tokens", "cache write"],
  ["output_tokens", "out"],
  ["reasoning_tokens", "reasoning"],
  ["total_tokens", "total"],
];

/** One line: `model · calls N · tokens in N, …, out N · $0.0123`, each part only when known. */
export function usageText(usage: JobUsage): string {
  const parts: string[] = [];
  if (usage.model !== undefined) parts.push(usage.model);
  const counts = LABELS.filter(([key]) => typeof usage[key] === "number").map(
    ([key, label]) => `${label} ${Number(usage[key]).toLocaleString("en")}`,
  );
  if (counts.length > 0) parts.push(`tokens ${counts.join(", ")}`);
  if (usage.cost_usd !== undefined) parts.push(`$${usage.cost_usd.toFixed(4)}`);
  return parts.join(" · ");
}
