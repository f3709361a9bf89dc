import { usageOf, type ModelUsage } from "../../trajectory/usage.js";
import { arrayOf, field, numberOf, recordOf, stringOf, type JsonRecord } from "../json-access.js";

/**
 * The usage and cost the trajectory sources record, read into `ModelUsage` with the sources'
 * own numbers (docs/trajectories.md, "Usage and cost"): nothing is estimated or derived.
 */

/** A LiteLLM / OpenAI-shaped completion's `usage` (OpenHands' `model_response`). */
export function completionUsage(response: JsonRecord | undefined): ModelUsage | undefined {
  const usage = recordOf(field(response, "usage"));
  if (usage === undefined) return undefined;
  const promptDetails = recordOf(field(usage, "prompt_tokens_details"));
  const completionDetails = recordOf(field(usage, "completion_tokens_details"));
  return usageOf({
    model: stringOf(field(response, "model")),
    input_tokens: field(usage, "prompt_tokens"),
    output_tokens: field(usage, "completion_tokens"),
    total_tokens: field(usage, "total_tokens"),
    cache_read_tokens:
      numberOf(field(usage, "cache_read_input_tokens")) ?? field(promptDetails, "cached_tokens"),
    cache_write_tokens: field(usage, "cache_creation_input_tokens"),
    reasoning_tokens: field(completionDetails, "reasoning_tokens"),
  });
}

/**
 * OpenHands' accumulated `metrics` (a resolver or evaluation line's `metrics`, an event's
 * `llm_metrics`): `accumulated_cost`, `accumulated_token_usage`, and as many calls as it lists
 * latencies (one per completion) or else costs.
 */
export function openHandsMetricsUsage(metrics: JsonRecord | undefined): ModelUsage | undefined {
  if (metrics === undefined) return undefined;
  const tokens = recordOf(field(metrics, "accumulated_token_usage"));
  const model = stringOf(field(tokens, "model"));
  const latencies = arrayOf(field(metrics, "response_latencies")) ?? [];
  const costs = arrayOf(field(metrics, "costs")) ?? [];
  const calls =
    latencies.length > 0 ? latencies.length : costs.length > 0 ? costs.length : undefined;
  return usageOf({
    // OpenHands names the sum of several models "default".
    model: model === "default" ? undefined : model,
    input_tokens: field(tokens, "prompt_tokens"),
    output_tokens: field(tokens, "completion_tokens"),
    cache_read_tokens: field(tokens, "cache_read_tokens"),
    cache_write_tokens: field(tokens, "cache_write_tokens"),
    cost_usd: field(metrics, "accumulated_cost"),
    calls,
  });
}

/** Inspect's `ModelUsage` (a model event's `output.usage`, a `model_usage` entry). */
export function inspectUsage(
  usage: JsonRecord | undefined,
  model: string | undefined,
): ModelUsage | undefined {
  if (usage === undefined) return undefined;
  return usageOf({
    model,
    input_tokens: field(usage, "input_tokens"),
    output_tokens: field(usage, "output_tokens"),
    total_tokens: field(usage, "total_tokens"),
    cache_read_tokens: field(usage, "input_tokens_cache_read"),
    cache_write_tokens: field(usage, "input_tokens_cache_write"),
    reasoning_tokens: field(usage, "reasoning_tokens"),
    cost_usd: field(usage, "total_cost"),
  });
}

/** Inspect's `model_usage` (model name → usage) as one usage per model, in the log's order. */
export function inspectModelUsage(modelUsage: JsonRecord | undefined): ModelUsage[] {
  const usages: ModelUsage[] = [];
  for (const model of Object.keys(modelUsage ?? {})) {
    const usage = inspectUsage(recordOf(field(modelUsage, model)), model);
    if (usage !== undefined) usages.push(usage);
  }
  return usages;
}

/**
 * SWE-agent's `info.model_stats`: the run's totals (`instance_cost`, `tokens_sent`,
 * `tokens_received`, `api_calls`). `total_cost` is left aside: older versions sum it over every
 * instance of a batch, not this run.
 */
export function sweAgentModelStats(stats: JsonRecord | undefined): ModelUsage | undefined {
  if (stats === undefined) return undefined;
  return usageOf({
    input_tokens: field(stats, "tokens_sent"),
    output_tokens: field(stats, "tokens_received"),
    cost_usd: field(stats, "instance_cost"),
    calls: field(stats, "api_calls"),
  });
}
