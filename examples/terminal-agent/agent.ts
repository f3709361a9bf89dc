/**
 * A small terminal agent on verbatim: type a message, the agent answers with two tools
 * (read_file, write_file with approval); the conversation is saved into a package folder after
 * every turn and resumed from it on the next run.
 *
 *   node bin/run-ts.js examples/terminal-agent/agent.ts [--package DIR] [--root DIR]
 *       [--backend provider|claude-code|codex]
 *
 * Provider backend: VERBATIM_PROVIDER (anthropic, openai-chat, openai-responses, gemini,
 * openrouter; default anthropic) and VERBATIM_MODEL, with the provider's key and base URL from
 * its usual variables (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, …). CLI backends: the signed-in
 * `claude` or `codex` on PATH, VERBATIM_MODEL passed as --model (docs/cli-agents.md). Lines starting with `/`:
 * /compact, /cost, /new, /quit.
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import type { Item } from "../../packages/library/src/format/index.js";
import {
  openLiveConversation,
  type LiveConversation,
} from "../../packages/library/src/conversation/index.js";
import { chooseBackend } from "./backends.js";
import { agentTools } from "./tools.js";

const { values } = parseArgs({
  options: {
    package: { type: "string", default: "agent-session.pkg" },
    root: { type: "string", default: "." },
    backend: { type: "string", default: "provider" },
  },
});
const packageDir = resolve(values.package);
const root = resolve(values.root);
await mkdir(packageDir, { recursive: true });

const rl = createInterface({ input: process.stdin, terminal: false });
const lines = rl[Symbol.asyncIterator]();
const interactive = process.stdin.isTTY === true;
async function ask(prompt: string): Promise<string | undefined> {
  if (interactive) process.stdout.write(prompt);
  const next = await lines.next();
  return next.done === true ? undefined : next.value;
}

/** Prints items as they appear; streamed text is printed as it grows. */
const shown = new Map<string, string>();
function show(items: readonly Item[]): void {
  for (const item of items) {
    const line = describe(item);
    const before = shown.get(item.id);
    if (before === line) continue;
    if (before !== undefined && item.type === "assistant" && line.startsWith(before)) {
      process.stdout.write(line.slice(before.length));
    } else {
      if (before !== undefined || shown.size > 0) process.stdout.write("\n");
      process.stdout.write(line);
    }
    shown.set(item.id, line);
  }
}
function describe(item: Item): string {
  switch (item.type) {
    case "user":
      return `you> ${item.text}`;
    case "assistant":
      return `agent> ${item.text}`;
    case "tool":
      return `  [${item.name} ${item.status}${item.summary === undefined ? "" : ` ${item.summary}`}]`;
    case "toolApproval":
      return `  [approval needed: ${item.summary}]`;
    case "failure":
      return `  [failed: ${item.message}]`;
    case "notice":
      return `  [${item.text}]`;
    default:
      return `  [${item.type}]`;
  }
}

const opened = await openLiveConversation(packageDir, {
  backend: chooseBackend(values.backend, process.env, root),
  tools: agentTools(root),
  system: "You are a helpful agent in a terminal. Use the tools to read and write files.",
  sections: () => [{ name: "Working folder", content: root }],
  onUpdate: () => show(conversation().items),
});
const conversation = (): LiveConversation => opened.conversation;
show(conversation().items);

async function settle(): Promise<void> {
  for (;;) {
    await conversation().whenIdle();
    await opened.save();
    if (!conversation().awaitingApproval) return;
    const pending = conversation().items.filter((item) => item.type === "toolApproval");
    const approval = pending.find(
      (item) => conversation().snapshot().approvalCards.get(item.id)?.state === "pending",
    );
    if (approval === undefined) return;
    const answer = (await ask("\nallow? [y]es / [n]o / [a]lways: "))?.trim().toLowerCase();
    if (answer === undefined) return;
    conversation().answerApproval(approval.id, {
      approved: answer.startsWith("y") || answer.startsWith("a"),
      alwaysAllow: answer.startsWith("a"),
    });
  }
}

await settle();
if (conversation().resume()) await settle();
for (;;) {
  const line = await ask("\n> ");
  if (line === undefined || line.trim() === "/quit") break;
  const text = line.trim();
  if (text === "") continue;
  if (text === "/cost") {
    process.stdout.write(
      `\n${JSON.stringify(conversation().estimatedCost)} ${JSON.stringify(conversation().usage)}`,
    );
    continue;
  }
  if (text === "/new") {
    conversation().requestNewConversation().confirm();
    await opened.save();
    shown.clear();
    continue;
  }
  if (text === "/compact") {
    const preview = conversation().compactionPreview();
    process.stdout.write(`\ncompaction: ${JSON.stringify(preview)}`);
    if (preview.available) await conversation().compact();
    await settle();
    continue;
  }
  conversation().send(text);
  await settle();
}
await opened.save();
process.stdout.write("\n");
rl.close();
