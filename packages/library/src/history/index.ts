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
export { messageSchema } from "./schema.js";
export type {
  ChatMLContentPart,
  ChatMLImagePart,
  ChatMLMessage,
  ChatMLMetadata,
  ChatMLTextPart,
  ChatMLToolCall,
} from "./chatml.js";
