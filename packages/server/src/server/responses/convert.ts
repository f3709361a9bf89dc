import { VerbatimError } from "verbatim-llm/core";
import { toolCallArgumentText, toolResultText } from "verbatim-llm/history";
import type { Block, Message } from "verbatim-llm/history";
import type { GatewayMessage } from "../../gateway/index.js";
import type { Usage } from "verbatim-llm/pricing";
import type { CreateResponseBody, InputItem, ResponseItem, ResponseObject } from "./schemas.js";

/**
 * Between the Responses API's items and the stored messages (src/history blocks): each input
 * item becomes one stored message (a message, a function call as an assistant toolCall, a
 * function call output as a tool message), and the model's answer becomes one assistant
 * message whose text and tool calls are the response's output items.
 */
export interface NewMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly content: readonly Block[];
}

function partsText(content: Extract<InputItem, { role: string }>["content"]): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part) => ({ type: "text", text: part.text }));
}

/**
 * The input as messages to store. A function call output names its call by `call_id`; its
 * tool name is found among the calls of the context or of the input itself.
 */
export function inputToMessages(
  input: CreateResponseBody["input"],
  contextCalls: ReadonlyMap<string, string>,
): NewMessage[] {
  if (typeof input === "string")
    return [{ role: "user", content: [{ type: "text", text: input }] }];
  const calls = new Map(contextCalls);
  return input.map((item, index): NewMessage => {
    if ("role" in item) return { role: item.role, content: partsText(item.content) };
    if (item.type === "function_call") {
      calls.set(item.call_id, item.name);
      return {
        role: "assistant",
        content: [
          { type: "toolCall", id: item.call_id, name: item.name, arguments: item.arguments },
        ],
      };
    }
    const name = calls.get(item.call_id);
    if (name === undefined) {
      throw new VerbatimError(
        "invalid_request",
        `no function call with call_id "${item.call_id}" precedes this output`,
        {
          where: `body.input[${index}].call_id`,
          hint: "Answer a call_id of the previous response's function_call items (or of an earlier input item); nothing was written",
        },
      );
    }
    return {
      role: "tool",
      content: [
        {
          type: "toolResult",
          callID: item.call_id,
          toolName: name,
          isError: false,
          content: item.output,
        },
      ],
    };
  });
}

/** Tool calls of a context, by call id → tool name. */
export function callsOf(messages: readonly Message[]): Map<string, string> {
  const calls = new Map<string, string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "toolCall") calls.set(block.id, block.name);
    }
  }
  return calls;
}

function textOf(blocks: readonly Block[]): string {
  return blocks
    .filter((block): block is Extract<Block, { type: "text" }> => block.type === "text")
    .map((block) => block.text)
    .join("");
}

const itemStatus = (status: string): string =>
  status === "in_progress" ? "in_progress" : status === "completed" ? "completed" : "incomplete";

/** The item id of a message's `index`-th tool call. */
export function functionCallItemId(messageId: string, index: number): string {
  return `fc_${messageId}_${index}`;
}

/** One stored message as Responses API items (input items and output items alike). */
export function messageToItems(message: GatewayMessage): ResponseItem[] {
  const status = itemStatus(message.status);
  const items: ResponseItem[] = [];
  if (message.role === "tool") {
    message.content.forEach((block, index) => {
      if (block.type !== "toolResult") return;
      items.push({
        type: "function_call_output",
        id: index === 0 ? message.id : `${message.id}_${index}`,
        call_id: block.callID,
        output: toolResultText(block),
        status,
      });
    });
    return items;
  }
  const text = textOf(message.content);
  const hasText = message.content.some(
    (block) => block.type !== "toolCall" && block.type !== "toolResult",
  );
  if (hasText || message.content.length === 0) {
    items.push({
      type: "message",
      id: message.id,
      status,
      role: message.role === "assistant" ? "assistant" : "user",
      content:
        message.role === "assistant"
          ? [{ type: "output_text", text, annotations: [] }]
          : [{ type: "input_text", text }],
    });
  }
  let call = 0;
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    items.push({
      type: "function_call",
      id: functionCallItemId(message.id, call),
      call_id: block.id,
      name: block.name,
      arguments: toolCallArgumentText(block),
      status,
    });
    call++;
  }
  return items;
}

export function usageObject(usage: Usage | undefined): ResponseObject["usage"] {
  if (usage === undefined) return null;
  const input = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.output,
  };
}

export interface ResponseFacts {
  /** The anchor the response continued (null at a conversation's start). */
  readonly previousResponseId: string | null;
  readonly instructions: string | null;
  readonly tools: CreateResponseBody["tools"];
  readonly maxOutputTokens: number | null;
}

/** The response object of a stored output message. */
export function responseObject(output: GatewayMessage, facts: ResponseFacts): ResponseObject {
  const gateway = output.metadata.gateway;
  const status = output.status;
  return {
    id: output.id,
    object: "response",
    created_at: Math.floor(Date.parse(output.createdAt) / 1000),
    status,
    error:
      status === "failed"
        ? (gateway.error ?? { code: "upstream_failed", message: "the upstream request failed" })
        : null,
    incomplete_details:
      status === "incomplete"
        ? {
            reason:
              gateway.stopReason === "max_tokens"
                ? "max_output_tokens"
                : (gateway.stopReason ?? "unknown"),
          }
        : null,
    instructions: facts.instructions,
    max_output_tokens: facts.maxOutputTokens,
    model: gateway.model ?? "",
    output: status === "in_progress" || status === "failed" ? [] : messageToItems(output),
    parallel_tool_calls: true,
    previous_response_id: facts.previousResponseId,
    store: true,
    temperature: null,
    top_p: null,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: facts.tools ?? [],
    truncation: "disabled",
    usage: usageObject(gateway.usage),
    metadata: { ...output.metadata.caller },
    conversation_id: output.conversationId,
  };
}
