import { VerbatimError, type JsonValue } from "verbatim-llm/core";
import type { Block } from "verbatim-llm/history";
import type { GatewayMessage } from "../index.js";
import type { HeldImage } from "../conversations/images.js";
import type { ContentPart, InputItem, InputMessageItem } from "./input-schemas.js";
import type { CreateResponseBody } from "./schemas.js";

/**
 * The input items of a request as messages to store (docs/server/responses.md, "Conformance"): a message
 * of role user or assistant stays one; a `system` or `developer` message is stored as a user
 * message marked with its role (gateway fact `inputRole`) and reaches the model through the
 * provider's system slot (context.ts); a function or custom tool call is an assistant tool call,
 * its output a tool message; an `item_reference` is the stored item it names (resolved in the
 * caller's own store beforehand); a reasoning item given back is provider material, never
 * stored (A23), and is skipped. An image part is an `image` block naming the bytes
 * input-images.ts read (kept in the gateway's image store); a file part is refused clearly.
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

/** A stored message as the model context sees it (system and developer input kept as such). */
export function contextMessage(message: GatewayMessage): NewMessage {
  const inputRole = message.metadata.gateway.inputRole;
  return {
    role: message.role,
    content: message.content,
    ...(inputRole === undefined ? {} : { inputRole }),
  };
}

/** The stored messages an `item_reference` id names, resolved before conversion. */
export type ReferenceLookup = ReadonlyMap<string, readonly NewMessage[]>;

/** What an image part of the input is in the history: the block naming its kept bytes. */
export type InputImages = ReadonlyMap<string, HeldImage>;

function refuseFile(part: { file_id?: string | null | undefined }, where: string): never {
  throw new VerbatimError(
    "invalid_request",
    `input_file parts are not supported: the stored history holds text, images, tool calls and tool results, not files${part.file_id === undefined || part.file_id === null ? "" : " (file_id names a file of OpenAI's Files API, which this server does not have)"}`,
    {
      where,
      hint: "Send the file's content as input_text (or a page of it as an input_image); nothing was written",
    },
  );
}

function imageBlock(
  part: { image_url?: string | null | undefined },
  images: InputImages,
  where: string,
): Block {
  const image = images.get(part.image_url ?? "");
  if (image === undefined) {
    throw new VerbatimError("invalid_request", "this route does not take input_image parts", {
      where,
      hint: "Send images in the input of POST /v1/responses; nothing was written",
    });
  }
  return { type: "image", sha256: image.sha256, mimeType: image.mimeType };
}

function partBlocks(
  content: InputMessageItem["content"],
  images: InputImages,
  where: string,
): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part: ContentPart, index): Block => {
    switch (part.type) {
      case "input_text":
      case "output_text":
        return { type: "text", text: part.text };
      case "refusal":
        return { type: "text", text: part.refusal };
      case "input_image":
        return imageBlock(part, images, `${where}.content[${index}]`);
      case "input_file":
        return refuseFile(part, `${where}.content[${index}]`);
    }
  });
}

/**
 * A tool's output as a tool result and the images after it: a string, or content parts whose
 * texts are joined by a newline and whose images follow the result in the tool message (the
 * history's way of a tool returning images; every renderer sends them after the result).
 */
function outputBlocks(
  output: Extract<InputItem, { type: "function_call_output" }>["output"],
  images: InputImages,
  where: string,
): { readonly text: string; readonly images: Block[] } {
  if (typeof output === "string") return { text: output, images: [] };
  const texts: string[] = [];
  const blocks: Block[] = [];
  output.forEach((part, index) => {
    const at = `${where}.output[${index}]`;
    if (part.type === "input_text") texts.push(part.text);
    else if (part.type === "input_image") blocks.push(imageBlock(part, images, at));
    else refuseFile(part, at);
  });
  return { text: texts.join("\n"), images: blocks };
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
  images: InputImages = new Map(),
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
      const content = partBlocks(item.content, images, where);
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
        const output = outputBlocks(item.output, images, where);
        push({
          role: "tool",
          content: [
            {
              type: "toolResult",
              callID: item.call_id,
              toolName: name,
              isError: false,
              content: output.text,
            },
            ...output.images,
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
