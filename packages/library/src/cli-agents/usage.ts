import type { Usage } from "../pricing/types.js";
import { type Fields, numberField, objectField } from "./stream-events.js";

const count = (value: number | undefined): number =>
  value === undefined || value < 0 ? 0 : Math.round(value);

/**
 * Claude Code reports usage the Anthropic way: `input_tokens` already excludes the tokens read
 * from and written to the cache, so it maps field by field. `cacheWrite` is every token written
 * to the cache; `cacheWrite1h` the part written with the one-hour lifetime, kept when non-zero.
 */
export function usageFromClaude(usage: Fields): Usage {
  const result: Usage = {
    input: count(numberField(usage, "input_tokens")),
    output: count(numberField(usage, "output_tokens")),
    cacheRead: count(numberField(usage, "cache_read_input_tokens")),
    cacheWrite: count(numberField(usage, "cache_creation_input_tokens")),
    webSearchRequests: count(
      numberField(objectField(usage, "server_tool_use"), "web_search_requests"),
    ),
  };
  const oneHour = count(
    numberField(objectField(usage, "cache_creation"), "ephemeral_1h_input_tokens"),
  );
  return oneHour > 0 ? { ...result, cacheWrite1h: oneHour } : result;
}

/**
 * Codex reports usage the OpenAI way: `input_tokens` includes `cached_input_tokens` (and the
 * `cache_write_input_tokens` newer versions add), so those are subtracted to get the input
 * neither read from nor written to the cache. `output_tokens` already includes the reasoning
 * tokens. Codex has no server-side web search count; the parser counts its `web_search` items.
 */
export function usageFromCodex(usage: Fields, webSearchRequests: number): Usage {
  const input = count(numberField(usage, "input_tokens"));
  const cacheRead = count(numberField(usage, "cached_input_tokens"));
  const cacheWrite = count(numberField(usage, "cache_write_input_tokens"));
  return {
    input: Math.max(0, input - cacheRead - cacheWrite),
    output: count(numberField(usage, "output_tokens")),
    cacheRead,
    cacheWrite,
    webSearchRequests,
  };
}
