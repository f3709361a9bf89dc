/**
 * The provider-independent message model (SPEC A11, A23): what a conversation's history holds,
 * shared by the archive, the providers and the server. Only text, images, tool calls and tool
 * results: never provider-specific material such as thinking signatures.
 */
export type Role = "user" | "assistant" | "tool";

export interface TextBlock {
  readonly type: "text";
  readonly text: string;
}

/** An image sent to the model; its bytes live beside the history, named by their SHA-256. */
export interface ImageBlock {
  readonly type: "image";
  readonly sha256: string;
  readonly mimeType: string;
}

/** An image dropped on save (A16) or unreadable on open (A15); the model gets a placeholder. */
export interface ImageOmittedBlock {
  readonly type: "imageOmitted";
  readonly mimeType: string;
}

/** Tool-call arguments as sent: `arguments` when the bytes are UTF-8, else `argumentsBase64`. */
export type ToolCallBlock =
  | {
      readonly type: "toolCall";
      readonly id: string;
      readonly name: string;
      readonly arguments: string;
    }
  | {
      readonly type: "toolCall";
      readonly id: string;
      readonly name: string;
      readonly argumentsBase64: string;
    };

/** A tool's result as sent: `content` when the bytes are UTF-8, else `contentBase64`. */
export type ToolResultBlock =
  | {
      readonly type: "toolResult";
      readonly callID: string;
      readonly toolName: string;
      readonly isError: boolean;
      readonly content: string;
    }
  | {
      readonly type: "toolResult";
      readonly callID: string;
      readonly toolName: string;
      readonly isError: boolean;
      readonly contentBase64: string;
    };

export type Block = TextBlock | ImageBlock | ImageOmittedBlock | ToolCallBlock | ToolResultBlock;
export type BlockType = Block["type"];

export interface Message {
  readonly role: Role;
  readonly content: readonly Block[];
}

/** The five block types of a history message. */
export const BLOCK_TYPES: readonly BlockType[] = [
  "text",
  "image",
  "imageOmitted",
  "toolCall",
  "toolResult",
];
/** The three roles of a history message: user, assistant, tool. */
export const ROLES: readonly Role[] = ["user", "assistant", "tool"];

/** The text the model gets where an image was dropped from the saved conversation (A16). */
export const IMAGE_OMITTED_TEXT =
  "[Image omitted: an image was here but was dropped from the saved conversation to save space.]";

/** Looks up the bytes of an image block by its SHA-256 (hex); undefined when not held. */
export type ImageBytesLookup = (sha256: string) => Uint8Array | undefined;
