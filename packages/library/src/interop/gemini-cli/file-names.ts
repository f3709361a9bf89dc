import { basename, dirname } from "node:path";

/**
 * Whether a file found in a folder is one Gemini CLI writes for a conversation: a session
 * (`session-*.jsonl`, `session-*.json` before 0.39; in `chats/`, or copied elsewhere), a
 * sub-agent's session in a folder of `chats` named for its parent
 * (`chats/<parent id>/<id>.jsonl`), or a `/chat save`
 * checkpoint (`checkpoint-<tag>.json`, in the project's folder). Its activity logs
 * (`logs/session-*.jsonl`), settings and credentials are never taken. Without `path` (a caller
 * that knows only the name) the name decides alone.
 */
export function isGeminiCliFile(name: string, path?: string): boolean {
  if (/^checkpoint-.+\.json$/.test(name)) return true;
  const session = /^session-.+\.jsonl?$/.test(name);
  if (path === undefined || dirname(path) === ".") return session;
  // Gemini CLI's activity logs are `logs/session-<id>.jsonl`: not conversations.
  if (session) return basename(dirname(path)) !== "logs";
  return name.endsWith(".jsonl") && basename(dirname(dirname(path))) === "chats";
}
