import { isVerbatimError, VerbatimError } from "verbatim-llm/core";
import type { Message } from "verbatim-llm/history";
import type { AttachedSignedMaterial } from "verbatim-llm/providers";
import type { GatewayMessageStore } from "../index.js";
import { referencedIds, referencedMessages, splitFunctionCallId } from "./input.js";
import type { NewMessage, ReferenceLookup } from "./input.js";
import { modelVisibleHistory } from "./model-context.js";
import type { CreateResponseBody } from "./schemas.js";

/**
 * What the model is sent of a request's context and input: the model-visible history (aliased
 * tool-call ids, model-context.ts) without the `system` and `developer` messages, whose text
 * goes, in order and after the request's `instructions`, into the provider's system slot
 * (Anthropic `system`, Gemini `systemInstruction`, the Chat `system` message, Responses
 * `instructions`), each separated by a blank line.
 */
export function modelContext(
  instructions: string | null | undefined,
  messages: readonly NewMessage[],
): {
  readonly history: Message[];
  readonly system: string | undefined;
  /** Reasoning items given back, for OpenAI Responses (in front of their assistant message). */
  readonly signed: AttachedSignedMaterial[];
} {
  const parts: string[] = [];
  if (instructions !== undefined && instructions !== null && instructions !== "")
    parts.push(instructions);
  const kept: Message[] = [];
  const signed: AttachedSignedMaterial[] = [];
  for (const message of messages) {
    if (message.inputRole === undefined) {
      if (message.reasoning !== undefined && message.reasoning.length > 0) {
        signed.push({
          messageIndex: kept.length,
          material: {
            provider: "openai-responses",
            leading: message.reasoning,
            blockSignatures: [],
            trailing: [],
            reasoningDetails: [],
          },
        });
      }
      kept.push({ role: message.role, content: message.content });
      continue;
    }
    const text = message.content
      .map((block) => (block.type === "text" ? block.text : ""))
      .join("\n");
    if (text !== "") parts.push(text);
  }
  const { history } = modelVisibleHistory(kept);
  return { history, system: parts.length === 0 ? undefined : parts.join("\n\n"), signed };
}

/**
 * The stored items the input's `item_reference`s name, read in the caller's own store: a
 * response's message id, a function call's item id (`fc_<message>_<n>`), or an input message's
 * id. An id of another subject answers as a missing one (404), before anything is written.
 */
export async function resolveReferences(
  store: GatewayMessageStore,
  subject: string,
  input: CreateResponseBody["input"],
): Promise<ReferenceLookup> {
  const found = new Map<string, readonly NewMessage[]>();
  const ids = referencedIds(input);
  for (const [index, id] of ids.entries()) {
    if (found.has(id)) continue;
    const call = splitFunctionCallId(id);
    try {
      const { message, request } = await store.getMessageWithRequest(
        subject,
        call?.messageId ?? id,
      );
      // A store: false response's items are not the caller's to name (as OpenAI's).
      if (request?.echo?.["store"] === false) throw notFound(id, index, input);
      const messages = referencedMessages(message, call?.call);
      if (messages.length === 0) throw notFound(id, index, input);
      found.set(id, messages);
    } catch (error) {
      if (
        isVerbatimError(error) &&
        (error.code === "resource_not_found" || error.code === "gateway_message_not_found")
      )
        throw notFound(id, index, input);
      throw error;
    }
  }
  return found;
}

function notFound(id: string, _index: number, input: CreateResponseBody["input"]): VerbatimError {
  const position =
    typeof input === "string"
      ? -1
      : input.findIndex((item) => item.type === "item_reference" && item.id === id);
  return new VerbatimError("resource_not_found", `no stored item ${id}`, {
    where: `body.input[${position}].id`,
    hint: "An item_reference names an item this server gave you (a response's output item or an input item); nothing was written",
  });
}

/** Refuses the state settings this server does not take (docs/server/responses.md, "Conformance"). */
export function refuseUnsupportedState(body: CreateResponseBody): void {
  const refuse = (field: string, message: string, hint: string): never => {
    throw new VerbatimError("invalid_request", message, {
      where: `body.${field}`,
      hint: `${hint}; nothing was written`,
    });
  };
  if (body.prompt !== undefined && body.prompt !== null)
    refuse(
      "prompt",
      "prompt templates are not supported: this server has no stored prompts",
      "Send the prompt's text as instructions or input",
    );
  if (body.context_management !== undefined && body.context_management !== null)
    refuse(
      "context_management",
      "context_management is not supported",
      "Leave it out; long conversations are compressed with the summary routes (docs/server/responses.md)",
    );
}
