/**
 * Canonical ChatML (SPEC B9, B15): the standard chat-message shape that both stored shapes of
 * the server half are projected into. verbatim keeps the standard shape and does not redefine
 * it: `system`, `user`, `assistant` (with `tool_calls`), `tool` (with `tool_call_id`).
 */
export interface ChatMLTextPart {
  readonly type: "text";
  readonly text: string;
}

export interface ChatMLImagePart {
  readonly type: "image_url";
  readonly image_url: { readonly url: string };
}

export type ChatMLContentPart = ChatMLTextPart | ChatMLImagePart;

export interface ChatMLToolCall {
  readonly id: string;
  readonly type: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

/** Facts a projection keeps beside a message (never wire identity). */
export interface ChatMLMetadata {
  readonly execution_mechanism?: "provider_hosted" | "local_dynamic";
  readonly redacted?: boolean;
  readonly content_truncated?: boolean;
}

export type ChatMLMessage =
  | {
      readonly role: "system" | "user";
      readonly content: string | readonly ChatMLContentPart[];
      readonly metadata?: ChatMLMetadata;
    }
  | {
      readonly role: "assistant";
      readonly content: string | readonly ChatMLContentPart[] | null;
      readonly tool_calls?: readonly ChatMLToolCall[];
      readonly metadata?: ChatMLMetadata;
    }
  | {
      readonly role: "tool";
      readonly tool_call_id: string;
      readonly name?: string;
      readonly content: string;
      readonly metadata?: ChatMLMetadata;
    };
