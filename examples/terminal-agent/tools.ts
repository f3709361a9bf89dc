/** The agent's two tools: read a file, and write one (after the user approves). */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import type { HostTool } from "../../packages/library/src/conversation/index.js";
import { parseStrictJson } from "../../packages/library/src/core/index.js";

/** Resolves a path the model gave inside the working folder; refuses anything outside it. */
function inside(root: string, path: unknown): string {
  if (typeof path !== "string" || path === "") throw new Error("`path` must be a non-empty string");
  const full = resolve(root, path);
  const rel = relative(root, full);
  if (rel.startsWith("..") || resolve(root, rel) !== full) {
    throw new Error(`${path} is outside the working folder`);
  }
  return full;
}

function argumentsOf(text: string): Record<string, unknown> {
  const value = parseStrictJson(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error("the arguments must be a JSON object");
  }
  return value as Record<string, unknown>;
}

export function agentTools(root: string): HostTool[] {
  return [
    {
      name: "read_file",
      description: "Reads a UTF-8 text file of the working folder.",
      inputSchema: {
        type: "object",
        properties: {
          path: { type: "string", description: "Path relative to the working folder" },
        },
        required: ["path"],
      },
      async run(call) {
        const path = inside(root, argumentsOf(call.argumentsText)["path"]);
        const text = await readFile(path, "utf8");
        return {
          content: text,
          statusText: `${text.length} characters`,
          summary: relative(root, path),
        };
      },
    },
    {
      name: "write_file",
      description: "Writes a UTF-8 text file in the working folder (the user approves each write).",
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" } },
        required: ["path", "content"],
      },
      needsApproval: true,
      approvalSummary(call) {
        const args = argumentsOf(call.argumentsText);
        const content = typeof args["content"] === "string" ? args["content"] : "";
        return `write ${String(args["path"])} (${content.length} characters)`;
      },
      async run(call) {
        const args = argumentsOf(call.argumentsText);
        const path = inside(root, args["path"]);
        const content = args["content"];
        if (typeof content !== "string") throw new Error("`content` must be a string");
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, content);
        return {
          content: `wrote ${content.length} characters`,
          statusText: "written",
          summary: relative(root, path),
        };
      },
    },
  ];
}
