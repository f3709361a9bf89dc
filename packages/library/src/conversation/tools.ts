import type { JsonObject } from "../core/strict-json.js";
import type { ToolDefinition } from "../providers/types.js";

/**
 * A tool the host application lends the agent. The turn loop offers it to the model (name,
 * description, JSON Schema of its input), runs it when the model calls it, and feeds the result
 * back. A tool that `needsApproval` waits for the user: the panel gains a `toolApproval` item
 * and `approvalCards` holds its state until the user answers (A10a: also after reopening).
 */
export interface HostTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly inputSchema: JsonObject;
  /** True (or a function of the call) when the user must approve each call. */
  readonly needsApproval?: boolean | ((call: ToolCallInput) => boolean);
  /** What the approval card shows; defaults to the tool name and its arguments. */
  approvalSummary?(call: ToolCallInput): string;
  run(call: ToolCallInput, context: ToolRunContext): Promise<ToolOutput>;
}

/** One call of a tool, as the model made it. */
export interface ToolCallInput {
  readonly id: string;
  readonly name: string;
  /** The arguments as text (invalid UTF-8 replaced). */
  readonly argumentsText: string;
  /** The exact argument bytes the model sent. */
  readonly argumentBytes: Uint8Array;
}

export interface ToolRunContext {
  /** Aborted when the user cancels the turn. */
  readonly signal: AbortSignal;
}

/** An image a tool returns; it reaches the model in a user message inside the same turn. */
export interface ToolImage {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
}

/** An image a `generate_image` tool made: priced from the price table (A8). */
export interface GeneratedImage {
  /** The image model's provider and model, as the price table names them. */
  readonly provider: string;
  readonly model: string;
  /** Size and quality as the price table keys them (for example `1024x1024`, `medium`). */
  readonly size?: string;
  readonly quality?: string;
  readonly count?: number;
}

export interface ToolOutput {
  /** The result the model gets: text, or bytes kept verbatim (A26). */
  readonly content: string | Uint8Array;
  readonly isError?: boolean;
  /** Images shown to the model after the tool result (A3). */
  readonly images?: readonly ToolImage[];
  /** Short text for the panel's tool item (for example `1 created`). */
  readonly statusText?: string;
  /** What the call did, for the panel (for example `Card`). */
  readonly summary?: string;
  /** Images the tool generated, for cost (A8). */
  readonly generatedImages?: readonly GeneratedImage[];
}

export function toolDefinition(tool: HostTool): ToolDefinition {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
}
