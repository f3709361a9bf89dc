import type { FileImport } from "./imported.js";

/** One source file read and converted (`bytes` read), or the reason it could not be read. */
export type ConversationFileRead =
  | { readonly bytes: number; readonly result: FileImport }
  | { readonly result?: undefined; readonly reason: string };
