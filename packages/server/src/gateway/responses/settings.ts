import { VerbatimError, type JsonObject, type JsonValue } from "verbatim-llm/core";
import type { ProviderId } from "verbatim-llm/providers";
import type { CreateResponseBody } from "./schemas.js";

/**
 * The sampling, output and tool settings of a Responses request, as each provider takes them
 * (docs/server/responses.md, "Conformance"): passed as they are to OpenAI Responses, translated for OpenAI
 * Chat, OpenRouter, Anthropic and Gemini, or refused with a 400 naming the field when the
 * provider has no equivalent. Nothing is dropped silently: a setting this file does not send is
 * either the default or documented there as having no effect at that provider.
 */
export interface ProviderSettings {
  /** Provider fields written after those the renderer owns. */
  readonly extras: JsonObject;
  /** A `prompt_cache_key` for the providers that take one. */
  readonly promptCacheKey?: string;
}

function refuse(field: string, provider: ProviderId, what: string): never {
  throw new VerbatimError(
    "invalid_request",
    `${field} ${what} is not supported by the ${provider} provider this model is routed to`,
    {
      where: `body.${field}`,
      hint: "Leave the field out, or route the model to a provider that takes it (docs/server/responses.md, Conformance); nothing was written",
    },
  );
}

const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

type Body = CreateResponseBody;
type Choice = NonNullable<Body["tool_choice"]>;

/** A named-function tool choice's name, or undefined for the string modes. */
function chosenName(choice: Choice, provider: ProviderId): string | undefined {
  if (typeof choice === "string") return undefined;
  if (choice.type === "function" && typeof choice.name === "string") return choice.name;
  return refuse("tool_choice", provider, `of type "${choice.type}"`);
}

function forOpenAIResponses(body: Body, extras: Record<string, JsonValue>): void {
  const passed = [
    "temperature",
    "top_p",
    "tool_choice",
    "parallel_tool_calls",
    "text",
    "reasoning",
    "include",
    "top_logprobs",
    "safety_identifier",
    "user",
    "service_tier",
    "truncation",
    "prompt_cache_retention",
    "max_tool_calls",
  ] as const;
  for (const key of passed) {
    const value = body[key];
    if (given(value)) extras[key] = value as JsonValue;
  }
}

function forChat(body: Body, provider: ProviderId, extras: Record<string, JsonValue>): void {
  if (given(body.temperature)) extras["temperature"] = body.temperature;
  if (given(body.top_p)) extras["top_p"] = body.top_p;
  if (given(body.tool_choice)) {
    const name = chosenName(body.tool_choice, provider);
    extras["tool_choice"] =
      name === undefined ? (body.tool_choice as string) : { type: "function", function: { name } };
  }
  if (given(body.parallel_tool_calls) && given(body.tools) && body.tools.length > 0)
    extras["parallel_tool_calls"] = body.parallel_tool_calls;
  const format = body.text?.format;
  if (given(format) && format.type === "json_object") {
    extras["response_format"] = { type: "json_object" };
  } else if (given(format) && format.type === "json_schema") {
    extras["response_format"] = {
      type: "json_schema",
      json_schema: {
        name: format.name,
        schema: format.schema as JsonObject,
        ...(given(format.strict) ? { strict: format.strict } : {}),
        ...(given(format.description) ? { description: format.description } : {}),
      },
    };
  }
  if (given(body.text?.verbosity)) extras["verbosity"] = body.text.verbosity;
  const effort = body.reasoning?.effort;
  if (given(effort)) {
    if (provider === "openrouter") extras["reasoning"] = { effort };
    else extras["reasoning_effort"] = effort;
  }
  if (given(body.top_logprobs)) {
    extras["logprobs"] = true;
    extras["top_logprobs"] = body.top_logprobs;
  }
  if (given(body.user)) extras["user"] = body.user;
  if (given(body.safety_identifier)) extras["safety_identifier"] = body.safety_identifier;
  if (given(body.service_tier)) extras["service_tier"] = body.service_tier;
  if (given(body.prompt_cache_retention))
    extras["prompt_cache_retention"] = body.prompt_cache_retention;
  if (body.truncation === "auto") refuse("truncation", provider, '"auto"');
  if (given(body.max_tool_calls)) refuse("max_tool_calls", provider, "(a limit of tool calls)");
}

const ANTHROPIC_EFFORT: Readonly<Record<string, string>> = {
  low: "low",
  medium: "medium",
  high: "high",
};

function forAnthropic(body: Body, extras: Record<string, JsonValue>): void {
  const provider = "anthropic";
  if (given(body.temperature)) {
    if (body.temperature > 1) refuse("temperature", provider, "above 1");
    extras["temperature"] = body.temperature;
  }
  if (given(body.top_p)) extras["top_p"] = body.top_p;
  const hasTools = given(body.tools) && body.tools.length > 0;
  if (hasTools && (given(body.tool_choice) || body.parallel_tool_calls === false)) {
    const choice = body.tool_choice ?? "auto";
    const name = chosenName(choice, provider);
    const type = name !== undefined ? "tool" : choice === "required" ? "any" : (choice as string);
    extras["tool_choice"] = {
      type,
      ...(name === undefined ? {} : { name }),
      ...(body.parallel_tool_calls === false && type !== "none"
        ? { disable_parallel_tool_use: true }
        : {}),
    };
  }
  const outputConfig: Record<string, JsonValue> = {};
  const format = body.text?.format;
  if (given(format) && format.type === "json_object")
    refuse("text.format", provider, "of type json_object (send a json_schema)");
  if (given(format) && format.type === "json_schema")
    outputConfig["format"] = { type: "json_schema", schema: format.schema as JsonObject };
  if (given(body.text?.verbosity)) refuse("text.verbosity", provider, "");
  const effort = body.reasoning?.effort;
  if (given(effort)) {
    const mapped = ANTHROPIC_EFFORT[effort] ?? refuse("reasoning.effort", provider, `"${effort}"`);
    outputConfig["effort"] = mapped;
  }
  if (Object.keys(outputConfig).length > 0) extras["output_config"] = outputConfig;
  const user = body.safety_identifier ?? body.user;
  if (given(user)) extras["metadata"] = { user_id: user };
  if (given(body.top_logprobs)) refuse("top_logprobs", provider, "");
  if (given(body.service_tier) && body.service_tier !== "auto" && body.service_tier !== "default")
    refuse("service_tier", provider, `"${body.service_tier}"`);
  if (given(body.prompt_cache_retention)) refuse("prompt_cache_retention", provider, "");
  if (body.truncation === "auto") refuse("truncation", provider, '"auto"');
  if (given(body.max_tool_calls)) refuse("max_tool_calls", provider, "(a limit of tool calls)");
}

const GEMINI_MODE: Readonly<Record<string, string>> = {
  auto: "AUTO",
  required: "ANY",
  none: "NONE",
};

function forGemini(body: Body, extras: Record<string, JsonValue>): void {
  const provider = "gemini";
  const config: Record<string, JsonValue> = {};
  if (given(body.temperature)) config["temperature"] = body.temperature;
  if (given(body.top_p)) config["topP"] = body.top_p;
  const format = body.text?.format;
  if (given(format) && format.type !== "text") {
    config["responseMimeType"] = "application/json";
    if (format.type === "json_schema") config["responseJsonSchema"] = format.schema as JsonObject;
  }
  if (given(body.text?.verbosity)) refuse("text.verbosity", provider, "");
  const effort = body.reasoning?.effort;
  if (given(effort)) {
    if (effort !== "low" && effort !== "high" && effort !== "medium" && effort !== "minimal")
      refuse("reasoning.effort", provider, `"${effort}"`);
    config["thinkingConfig"] = { thinkingLevel: effort };
  }
  if (Object.keys(config).length > 0) extras["generationConfig"] = config;
  if (given(body.tool_choice) && given(body.tools) && body.tools.length > 0) {
    const name = chosenName(body.tool_choice, provider);
    extras["toolConfig"] = {
      functionCallingConfig:
        name === undefined
          ? { mode: GEMINI_MODE[body.tool_choice as string] ?? "AUTO" }
          : { mode: "ANY", allowedFunctionNames: [name] },
    };
  }
  if (body.parallel_tool_calls === false) refuse("parallel_tool_calls", provider, "false");
  if (given(body.top_logprobs)) refuse("top_logprobs", provider, "");
  if (given(body.service_tier) && body.service_tier !== "auto" && body.service_tier !== "default")
    refuse("service_tier", provider, `"${body.service_tier}"`);
  if (given(body.prompt_cache_retention)) refuse("prompt_cache_retention", provider, "");
  if (body.truncation === "auto") refuse("truncation", provider, '"auto"');
  if (given(body.max_tool_calls)) refuse("max_tool_calls", provider, "(a limit of tool calls)");
}

/** Refuses `include` values other than reasoning.encrypted_content (docs/server/responses.md). */
function checkInclude(body: Body): void {
  (body.include ?? []).forEach((value, index) => {
    if (value === "reasoning.encrypted_content") return;
    throw new VerbatimError("invalid_request", `include "${value}" is not supported`, {
      where: `body.include[${index}]`,
      hint: 'Only "reasoning.encrypted_content" is taken (docs/server/responses.md, Conformance); nothing was written',
    });
  });
}

/** The settings of `body` for `provider`; refuses what the provider cannot honour. */
export function providerSettings(provider: ProviderId, body: Body): ProviderSettings {
  checkInclude(body);
  const extras: Record<string, JsonValue> = {};
  switch (provider) {
    case "openai-responses":
      forOpenAIResponses(body, extras);
      break;
    case "openai-chat":
    case "openrouter":
      forChat(body, provider, extras);
      break;
    case "anthropic":
      forAnthropic(body, extras);
      break;
    case "gemini":
      forGemini(body, extras);
      break;
  }
  return {
    extras,
    ...(given(body.prompt_cache_key) ? { promptCacheKey: body.prompt_cache_key } : {}),
  };
}

/** The settings a response object echoes, as the caller sent them. */
export function echoedSettings(body: Body): Record<string, JsonValue> {
  const echo: Record<string, JsonValue> = {};
  const keys = [
    "temperature",
    "top_p",
    "tool_choice",
    "parallel_tool_calls",
    "text",
    "reasoning",
    "truncation",
    "store",
    "background",
    "conversation",
    "prompt_cache_key",
    "safety_identifier",
    "user",
  ] as const;
  for (const key of keys) {
    const value = body[key];
    if (given(value)) echo[key] = value as JsonValue;
  }
  return echo;
}
