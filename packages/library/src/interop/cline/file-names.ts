/**
 * The file a folder search takes for a Cline task (Cline, Roo Code, Kilo Code): each task folder
 * holds one `api_conversation_history.json`, and the import reads the folder's other files from
 * it. A file named on the command line is taken whatever its name (a file inside a task folder).
 */
export function isClineTaskFile(name: string): boolean {
  return name === "api_conversation_history.json";
}
