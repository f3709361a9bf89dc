import { join } from "node:path";
import { z } from "zod";
import { openArchive } from "../../archive/index.js";
import { VerbatimError } from "../../core/errors.js";
import { parseStrictJson } from "../../core/strict-json.js";
import type { Block, Message } from "../../history/message.js";
import { isProviderId, renderRequest, type ToolDefinition } from "../../providers/index.js";
import { EXIT_OK, parseCommandArgs, usageError, type Command } from "../command.js";
import { readInputFile, requireFolder } from "../paths.js";

/** The max tokens `verbatim render` asks for. */
export const RENDER_MAX_TOKENS = 8192;

/**
 * The result `render --message` adds for a tool call the saved history never answered (the
 * conversation stopped while the tool ran): an error result, so the request is one every
 * provider takes (Anthropic refuses user text right after a `tool_use`). Each addition is
 * reported on stderr.
 */
export const INTERRUPTED_TOOL_RESULT =
  "[verbatim: no result was saved for this tool call (the conversation stopped while it ran); this result was added when the request was rendered]";

/** Calls of the newest assistant turn with no result in the history. */
function unansweredCalls(history: readonly Message[]): { id: string; name: string }[] {
  let start = history.length;
  while (start > 0 && history[start - 1]?.role !== "assistant") start--;
  let first = start;
  while (first > 0 && history[first - 1]?.role === "assistant") first--;
  const answered = new Set<string>();
  for (const message of history.slice(start)) {
    for (const block of message.content)
      if (block.type === "toolResult") answered.add(block.callID);
  }
  const calls: { id: string; name: string }[] = [];
  for (const message of history.slice(first, start)) {
    for (const block of message.content) {
      if (block.type === "toolCall" && !answered.has(block.id)) {
        calls.push({ id: block.id, name: block.name });
      }
    }
  }
  return calls;
}

const toolsSchema = z.array(
  z.strictObject({
    name: z.string().min(1),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()),
    /** `"custom"`: an OpenAI Responses custom tool (docs/providers.md, "OpenAI Responses"). */
    kind: z.enum(["function", "custom"]).optional(),
    format: z.record(z.string(), z.unknown()).optional(),
  }),
);

async function readTools(cwd: string, path: string): Promise<ToolDefinition[]> {
  const text = (await readInputFile(cwd, path)).toString("utf8");
  const parsed = toolsSchema.safeParse(parseStrictJson(text, path));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VerbatimError(
      "invalid_argument",
      `${path} is not a list of tools: ${issue?.message ?? "invalid"}`,
      {
        where: `${path} $${(issue?.path ?? []).map((part) => `[${JSON.stringify(part)}]`).join("")}`,
        hint: 'Write a JSON array of {"name", "description", "inputSchema"} objects (with "kind": "custom" and its "format" for a Responses custom tool)',
      },
    );
  }
  return parsed.data as ToolDefinition[];
}

export const render: Command = {
  words: ["render"],
  usage:
    "<package> --provider anthropic|openai-chat|openai-responses|gemini|openrouter [--model M] [--system FILE] [--tools FILE] [--message TEXT]",
  summary:
    "Write the exact body of the next request (saved history plus a user message) to stdout.",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      {
        provider: { type: "string" },
        model: { type: "string" },
        system: { type: "string" },
        tools: { type: "string" },
        message: { type: "string" },
      },
      { min: 1, max: 1 },
    );
    const provider = values.provider;
    if (provider === undefined) throw usageError(this, "--provider is required");
    if (!isProviderId(provider)) {
      throw usageError(this, `unknown provider "${provider}"`);
    }
    const folder = await requireFolder(io.cwd, positionals[0] ?? "");
    const opened = await openArchive(folder);
    for (const notice of opened.notices) {
      // The next request would carry the saved history, which cannot be read: nothing to render.
      if (notice.kind === "unreadableConversation") {
        throw new VerbatimError(
          "unreadable_conversation",
          `the saved conversation cannot be read: ${notice.reason}`,
          {
            where: join(folder, "agent", "conversation.json"),
            hint: "Nothing was rendered; verbatim archive show <package> describes the file (docs/format-1.md, Decoding)",
          },
        );
      }
      io.stderr(`verbatim render: ${notice.text}\n`);
    }
    const model = values.model ?? opened.conversation.model;
    if (model === undefined || model === "") {
      throw usageError(this, "the package names no model: pass --model");
    }
    const system =
      values.system === undefined
        ? undefined
        : (await readInputFile(io.cwd, values.system)).toString("utf8");
    const tools = values.tools === undefined ? undefined : await readTools(io.cwd, values.tools);
    const history: Message[] = [...opened.conversation.history];
    if (values.message !== undefined) {
      const repaired = unansweredCalls(history).map((call): Block => {
        io.stderr(
          `verbatim render: note: the tool call ${call.id} (${call.name}) has no saved result; the request carries an added error result saying it was interrupted\n`,
        );
        return {
          type: "toolResult",
          callID: call.id,
          toolName: call.name,
          isError: true,
          content: INTERRUPTED_TOOL_RESULT,
        };
      });
      history.push({
        role: "user",
        content: [...repaired, { type: "text", text: values.message }],
      });
    }
    // As the live conversation does: the previous request sent every message before the
    // newest assistant message (for Anthropic's second cache breakpoint).
    let previousMessageCount: number | undefined;
    for (
      let index = history.length - 1;
      index >= 0 && previousMessageCount === undefined;
      index--
    ) {
      if (history[index]?.role === "assistant") previousMessageCount = index;
    }
    const rendered = renderRequest(provider, {
      history,
      images: (sha256) => opened.images.get(sha256),
      options: {
        model,
        maxTokens: RENDER_MAX_TOKENS,
        ...(previousMessageCount === undefined ? {} : { cache: { previousMessageCount } }),
        ...(system === undefined ? {} : { system }),
        ...(tools === undefined ? {} : { tools }),
      },
    });
    for (const warning of rendered.warnings) {
      io.stderr(`verbatim render: warning: ${warning.message} (at ${warning.where})\n`);
    }
    io.stdout(rendered.body);
    return EXIT_OK;
  },
};
