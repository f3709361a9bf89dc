import { VerbatimError, type JsonObject } from "verbatim-llm/core";
import type { ProviderId, ToolDefinition } from "verbatim-llm/providers";
import type { z } from "zod";
import type { customToolSchema, functionToolSchema, RequestTool } from "./schemas.js";

/**
 * The tools of a Responses request as the provider gets them (docs/server/responses.md, "Conformance"):
 * a function tool exactly (its `strict` kept), a custom (free-form) tool as OpenAI Responses'
 * custom tool and as a function tool taking `{input: string}`-free text elsewhere (the
 * library's `kind: "custom"`), the tools of Codex's `namespace` as function tools named
 * `namespace__name`, and a tool the provider runs itself (`web_search`, `file_search`, …)
 * passed as written to OpenAI Responses, which runs it, and refused with a 400 naming it for
 * every other provider.
 */
type FunctionTool = z.infer<typeof functionToolSchema>;
type CustomTool = z.infer<typeof customToolSchema>;

function isFunction(tool: { type: string }): tool is FunctionTool {
  return tool.type === "function";
}
function isCustom(tool: { type: string }): tool is CustomTool {
  return tool.type === "custom";
}

function definition(tool: FunctionTool | CustomTool, name: string): ToolDefinition {
  if (isCustom(tool)) {
    return {
      name,
      description: tool.description ?? "",
      inputSchema: { type: "object", properties: {} },
      kind: "custom",
      ...(tool.format === undefined || tool.format === null
        ? {}
        : { format: tool.format as JsonObject }),
    };
  }
  return {
    name,
    description: tool.description ?? "",
    inputSchema: (tool.parameters ?? { type: "object", properties: {} }) as JsonObject,
    ...(tool.strict === undefined || tool.strict === null ? {} : { strict: tool.strict }),
  };
}

/** The tool definitions to render; any hosted tool is refused (nothing was written). */
export function toolDefinitions(tools: readonly RequestTool[] | undefined): ToolDefinition[] {
  return renderedTools(tools, "anthropic").definitions;
}

/** The tools to render; a hosted tool for a provider that cannot run it is refused. */
export function renderedTools(
  tools: readonly RequestTool[] | undefined,
  provider: ProviderId,
): { readonly definitions: ToolDefinition[]; readonly hosted: JsonObject[] } {
  const definitions: ToolDefinition[] = [];
  const hosted: JsonObject[] = [];
  (tools ?? []).forEach((tool, index) => {
    if (isFunction(tool) || isCustom(tool)) {
      definitions.push(definition(tool, tool.name));
      return;
    }
    if (tool.type === "namespace" && "tools" in tool && Array.isArray(tool.tools)) {
      for (const inner of tool.tools as (FunctionTool | CustomTool)[]) {
        definitions.push(definition(inner, `${String(tool.name)}__${inner.name}`));
      }
      return;
    }
    if (provider === "openai-responses") {
      hosted.push(tool as JsonObject);
      return;
    }
    throw new VerbatimError(
      "invalid_request",
      `the hosted tool "${tool.type}" is not supported by the ${provider} provider this model is routed to: the provider would have to run it`,
      {
        where: `body.tools[${index}]`,
        hint: `Remove the ${tool.type} tool (Codex: web_search = "disabled" in config.toml), route the model to OpenAI Responses, or declare a function tool your code runs; nothing was written`,
      },
    );
  });
  return { definitions, hosted };
}
