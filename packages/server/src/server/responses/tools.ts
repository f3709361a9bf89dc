import { VerbatimError } from "verbatim-llm/core";
import type { JsonObject } from "verbatim-llm/core";
import type { ToolDefinition } from "verbatim-llm/providers";
import type { z } from "zod";
import type { customToolSchema, functionToolSchema, RequestTool } from "./schemas.js";

/**
 * The tools of a Responses request as the provider gets them (docs/server.md, "Conformance"):
 * a function tool exactly (its `strict` kept), a custom (free-form) tool as OpenAI Responses'
 * custom tool and as a function tool taking `{input: string}`-free text elsewhere (the
 * library's `kind: "custom"`), the tools of Codex's `namespace` as function tools named
 * `namespace__name`, and a tool the provider runs itself (`web_search`, `file_search`, …)
 * refused with a 400 naming it: no provider behind this server runs hosted tools for it.
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

/** The tool definitions to render; a hosted tool is refused (nothing was written). */
export function toolDefinitions(tools: readonly RequestTool[] | undefined): ToolDefinition[] {
  const definitions: ToolDefinition[] = [];
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
    throw new VerbatimError(
      "invalid_request",
      `the hosted tool "${tool.type}" is not supported: the provider would have to run it, and no provider behind this server runs hosted tools for its callers`,
      {
        where: `body.tools[${index}]`,
        hint: `Remove the ${tool.type} tool (Codex: web_search = "disabled" in config.toml), or declare a function tool your code runs; nothing was written`,
      },
    );
  });
  return definitions;
}
