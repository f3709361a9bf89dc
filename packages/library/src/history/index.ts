export { BLOCK_TYPES, IMAGE_OMITTED_TEXT, ROLES } from "./message.js";
export type {
  Block,
  BlockType,
  ImageBlock,
  ImageBytesLookup,
  ImageOmittedBlock,
  Message,
  Role,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
} from "./message.js";
export {
  toolCallArgumentBytes,
  toolCallArgumentText,
  toolCallFromBytes,
  toolResultBytes,
  toolResultFromBytes,
  toolResultText,
} from "./blocks.js";
export { blockSchema, messageIsWellFormed, messageSchema, roleSchema } from "./schema.js";
export { isBlockList } from "./block-check.js";
export type {
  ChatMLContentPart,
  ChatMLImagePart,
  ChatMLMessage,
  ChatMLMetadata,
  ChatMLTextPart,
  ChatMLToolCall,
} from "./chatml.js";
