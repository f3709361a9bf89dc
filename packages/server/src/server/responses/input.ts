import { VerbatimError, type JsonValue } from "verbatim-llm/core";
import type { Block } from "verbatim-llm/history";
import type { GatewayMessage } from "../../gateway/index.js";
import type { ContentPart, InputItem, InputMessageItem } from "./input-schemas.js";
import type { CreateResponseBody } from "./schemas.js";

/**
 * The input items of a request as messages to store (docs/server.md, "Conformance"): a message
 * of role user or assistant stays one; a `system` or `developer` message is stored as a user
 * message marked with its role (gateway fact `inputRole`) and reaches the model through the
 * provider's system slot (context.ts); a function or custom tool call is an assistant tool call,
 * its output a tool message; an `item_reference` is the stored item it names (resolved in the
 * caller's own store beforehand); a reasoning item given back is provider material, never
 * stored (A23), and is skipped. Images and files are refused clearly: this server does not keep
 * their bytes.
 */
export interface NewMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly content: readonly Block[];
  /** A `system` or `developer` input message (stored as a user message marked so). */
  readonly inputRole?: "system" | "developer";
  /**
   * Reasoning items the client gave back before this assistant message, as sent: passed on to
   * OpenAI Responses in front of it (provider material within the turn, A23; never stored).
   */
  readonly reasoning?: readonly JsonValue[];
}

/** The stored messages an `item_reference` id names, resolved before conversion. */
export type ReferenceLookup = ReadonlyMap<string, readonly NewMessage[]>;

function refuseBinary(
  part: { type: string; file_id?: string | null | undefined },
  where: string,
): never {
  const what = part.type === "input_image" ? "an image" : "a file";
  throw new VerbatimError(
    "invalid_request",
    `${part.type} parts are not supported: this server stores text, tool calls and tool results, not the bytes of ${what}${part.file_id === undefined || part.file_id === null ? "" : " (file_id names a file of OpenAI's Files API, which this server does not have)"}`,
    {
      where,
      hint: `Send the content as input_text (describe or extract the ${part.type === "input_image" ? "image" : "file"}); nothing was written`,
    },
  );
}

function partBlocks(content: InputMessageItem["content"], where: string): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part: ContentPart, index): Block => {
    switch (part.type) {
      case "input_text":
      case "output_text":
        return { type: "text", text: part.text };
      case "refusal":
        return { type: "text", text: part.refusal };
      case "input_image":
      case "input_file":
        return refuseBinary(part, `${where}.content[${index}]`);
    }
  });
}

/** A tool's output as the text of a tool result: a string, or its text parts joined. */
function outputText(
  output: Extract<InputItem, { type: "function_call_output" }>["output"],
  where: string,
): string {
  if (typeof output === "string") return output;
  return output
    .map((part, index) => {
      if (part.type === "input_text") return part.text;
      return refuseBinary(part, `${where}.output[${index}]`);
    })
    .join("\n");
}

function missingCall(callId: string, where: string): never {
  throw new VerbatimError(
    "invalid_request",
    `no function call with call_id "${callId}" precedes this output`,
    {
      where,
      hint: "Answer a call_id of the previous response's function_call items (or of an earlier input item); nothing was written",
    },
  );
}

/** The name a namespaced tool has in the history and at the provider (`namespace__name`). */
export function namespacedName(namespace: string | null | undefined, name: string): string {
  return namespace === undefined || namespace === null || namespace === ""
    ? name
    : `${namespace}__${name}`;
}

/**
 * The input as messages to store. A tool output names its call by `call_id`; its tool name is
 * found among the calls of the context or of the input itself.
 */
export function inputToMessages(
  input: CreateResponseBody["input"],
  contextCalls: ReadonlyMap<string, string>,
  references: ReferenceLookup = new Map(),
): NewMessage[] {
  if (typeof input === "string")
    return [{ role: "user", content: [{ type: "text", text: input }] }];
  const calls = new Map(contextCalls);
  const messages: NewMessage[] = [];
  // Reasoning items given back wait for the assistant message they came before.
  let reasoning: JsonValue[] = [];
  const push = (message: NewMessage) => {
    if (message.role === "assistant" && reasoning.length > 0) {
      messages.push({ ...message, reasoning });
      reasoning = [];
    } else {
      messages.push(message);
    }
  };
  input.forEach((item, index) => {
    const where = `body.input[${index}]`;
    if ("role" in item) {
      const content = partBlocks(item.content, where);
      if (item.role === "system" || item.role === "developer") {
        push({ role: "user", content, inputRole: item.role });
      } else {
        push({ role: item.role, content });
      }
      return;
    }
    switch (item.type) {
      case "function_call":
      case "custom_tool_call": {
        const name =
          item.type === "function_call" ? namespacedName(item.namespace, item.name) : item.name;
        calls.set(item.call_id, name);
        push({
          role: "assistant",
          content: [
            {
              type: "toolCall",
              id: item.call_id,
              name,
              arguments: item.type === "function_call" ? item.arguments : item.input,
            },
          ],
        });
        return;
      }
      case "function_call_output":
      case "custom_tool_call_output": {
        const name = calls.get(item.call_id) ?? missingCall(item.call_id, `${where}.call_id`);
        push({
          role: "tool",
          content: [
            {
              type: "toolResult",
              callID: item.call_id,
              toolName: name,
              isError: false,
              content: outputText(item.output, where),
            },
          ],
        });
        return;
      }
      case "item_reference": {
        const found = references.get(item.id) ?? [];
        for (const message of found) {
          for (const block of message.content) {
            if (block.type === "toolCall") calls.set(block.id, block.name);
          }
          push(message);
        }
        return;
      }
      case "reasoning":
        // Without its encrypted content a reasoning item names an item of the upstream's own
        // store, which holds none (this server sends store: false): it is not passed on.
        if (typeof item.encrypted_content === "string" && item.encrypted_content !== "") {
          reasoning.push(item as JsonValue);
        }
        return;
    }
  });
  return messages;
}

/** The ids an input refers to with `item_reference`. */
export function referencedIds(input: CreateResponseBody["input"]): string[] {
  if (typeof input === "string") return [];
  return input.flatMap((item) => (item.type === "item_reference" ? [item.id] : []));
}

/** The id of the stored message a function-call item id (`fc_<message>_<n>`) names. */
export function splitFunctionCallId(id: string): { messageId: string; call: number } | undefined {
  const match = /^fc_(.+)_(\d+)$/.exec(id);
  if (match === null || match[1] === undefined || match[2] === undefined) return undefined;
  return { messageId: match[1], call: Number(match[2]) };
}

/**
 * What one referenced stored item is as input: a message id names the message's text (and all
 * of it for a tool result or a message without tool calls), a function-call item id the one call.
 */
export function referencedMessages(
  message: GatewayMessage,
  call: number | undefined,
): NewMessage[] {
  const inputRole = message.metadata.gateway.inputRole;
  const role = message.role;
  if (call !== undefined) {
    const calls = message.content.filter((block) => block.type === "toolCall");
    const block = calls[call];
    return block === undefined ? [] : [{ role: "assistant", content: [block] }];
  }
  const hasCalls = message.content.some((block) => block.type === "toolCall");
  const content = hasCalls
    ? message.content.filter((block) => block.type !== "toolCall")
    : message.content;
  if (content.length === 0) return [];
  return [{ role, content, ...(inputRole === undefined ? {} : { inputRole }) }];
}
