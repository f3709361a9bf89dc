import {
  toolCallArgumentBytes,
  toolCallArgumentText,
  toolResultFromBytes,
} from "../history/blocks.js";
import type {
  Block,
  ImageBlock,
  Message,
  ToolCallBlock,
  ToolResultBlock,
} from "../history/message.js";
import { sha256Hex } from "../core/hash.js";
import { utf8Encode } from "../core/bytes.js";
import type { ItemOfType } from "../format/items.js";
import { findItem, replaceItem } from "./state.js";
import type { TurnControl, TurnHost } from "./turn-host.js";
import type { HostTool, ToolCallInput, ToolOutput } from "./tools.js";

export const DENIED_RESULT = "The user denied this tool call.";
export const CANCELLED_RESULT = "The tool call was cancelled.";

/** The newest assistant message with tool calls some of which have no result yet. */
export function openToolCalls(
  history: readonly Message[],
): { readonly assistantIndex: number; readonly calls: readonly ToolCallBlock[] } | undefined {
  let assistantIndex = -1;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    if (history[index]?.role === "assistant") {
      assistantIndex = index;
      break;
    }
  }
  const assistant = history[assistantIndex];
  if (assistant === undefined) return undefined;
  const calls = assistant.content.filter(
    (block): block is ToolCallBlock => block.type === "toolCall",
  );
  if (calls.length === 0) return undefined;
  const answered = new Set(resultsOf(history, assistantIndex).map((result) => result.callID));
  const open = calls.filter((call) => !answered.has(call.id));
  return open.length === 0 ? undefined : { assistantIndex, calls: open };
}

function resultsOf(history: readonly Message[], assistantIndex: number): ToolResultBlock[] {
  const next = history[assistantIndex + 1];
  if (next?.role !== "tool") return [];
  return next.content.filter((block): block is ToolResultBlock => block.type === "toolResult");
}

/** Adds a tool result to the tool message that follows the assistant message (A11). */
function appendResult(history: Message[], assistantIndex: number, result: ToolResultBlock): void {
  const next = history[assistantIndex + 1];
  if (next?.role === "tool") {
    history[assistantIndex + 1] = { role: "tool", content: [...next.content, result] };
  } else {
    history.splice(assistantIndex + 1, 0, { role: "tool", content: [result] });
  }
}

/** Images a tool returned go to the model in a user message right after the tool message (A3). */
function appendImages(
  host: TurnHost,
  assistantIndex: number,
  toolName: string,
  output: ToolOutput,
): void {
  const images = output.images ?? [];
  if (images.length === 0) return;
  const blocks: Block[] = [];
  for (const image of images) {
    const sha256 = sha256Hex(image.bytes);
    host.imageStore.set(sha256, image.bytes);
    blocks.push({ type: "image", sha256, mimeType: image.mimeType } satisfies ImageBlock);
  }
  const history = host.state.history;
  const at = assistantIndex + 2;
  const existing = history[at];
  if (existing?.role === "user" && at === history.length - 1) {
    history[at] = { role: "user", content: [...existing.content, ...blocks] };
  } else {
    const intro = { type: "text", text: `Images returned by ${toolName}:` } as const;
    history.splice(at, 0, { role: "user", content: [intro, ...blocks] });
  }
}

function toolItemFor(host: TurnHost, call: ToolCallBlock): ItemOfType<"tool"> {
  const items = host.state.items;
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index];
    if (item?.type === "tool" && item.callID === call.id) return item;
  }
  const item: ItemOfType<"tool"> = {
    id: host.newId(),
    type: "tool",
    name: call.name,
    status: "running",
    callID: call.id,
  };
  items.push(item);
  return item;
}

function approvalItemFor(
  host: TurnHost,
  call: ToolCallBlock,
): ItemOfType<"toolApproval"> | undefined {
  for (const item of host.state.items) {
    if (item.type === "toolApproval" && item.callID === call.id) return item;
  }
  return undefined;
}

function alwaysAllowed(host: TurnHost, toolName: string): boolean {
  for (const [id, card] of host.state.approvalCards) {
    if (card.state !== "approved" || card.alwaysAllow !== true) continue;
    const item = findItem(host.state.items, id);
    if (item?.type === "toolApproval" && item.toolName === toolName) return true;
  }
  return false;
}

function callInput(call: ToolCallBlock): ToolCallInput {
  return {
    id: call.id,
    name: call.name,
    argumentsText: toolCallArgumentText(call),
    argumentBytes: toolCallArgumentBytes(call),
  };
}

function resultBlock(
  call: ToolCallBlock,
  content: string | Uint8Array,
  isError: boolean,
): ToolResultBlock {
  const bytes = typeof content === "string" ? utf8Encode(content) : content;
  return typeof content === "string"
    ? { type: "toolResult", callID: call.id, toolName: call.name, isError, content }
    : toolResultFromBytes(call.id, call.name, isError, bytes);
}

export type SettleOutcome = "done" | "paused" | "cancelled";

/**
 * Runs the open tool calls of the newest assistant message in order, each result appended as
 * it arrives so that a save in between loses nothing. A call that needs approval pauses the
 * turn until `approvalCards` holds the answer (also across reopening, A10a).
 */
export async function settleToolCalls(
  host: TurnHost,
  control: TurnControl,
): Promise<SettleOutcome> {
  for (;;) {
    if (!control.alive()) return "cancelled";
    const open = openToolCalls(host.state.history);
    if (open === undefined) return "done";
    const call = open.calls[0];
    if (call === undefined) return "done";
    if (control.controller.signal.aborted) {
      cancelOpenCalls(host);
      return "cancelled";
    }
    const tool = host.tools.find((candidate) => candidate.name === call.name);
    const item = toolItemFor(host, call);
    if (tool === undefined) {
      finish(
        host,
        open.assistantIndex,
        call,
        item,
        resultBlock(call, `Unknown tool "${call.name}".`, true),
        "failed",
      );
      continue;
    }
    const input = callInput(call);
    if (needsApproval(tool, input) && !alwaysAllowed(host, tool.name)) {
      const approval = approvalItemFor(host, call);
      if (approval === undefined) {
        const summary = tool.approvalSummary?.(input) ?? `${tool.name} ${input.argumentsText}`;
        host.state.items.push({
          id: host.newId(),
          type: "toolApproval",
          callID: call.id,
          toolName: tool.name,
          summary,
        });
        host.state.approvalCards.set(host.state.items.at(-1)?.id ?? "", { state: "pending" });
        host.change("cardState");
        host.update();
        return "paused";
      }
      const card = host.state.approvalCards.get(approval.id);
      if (card === undefined || card.state === "pending") return "paused";
      if (card.state === "denied") {
        finish(
          host,
          open.assistantIndex,
          call,
          item,
          resultBlock(call, DENIED_RESULT, true),
          "denied",
        );
        continue;
      }
    }
    let output: ToolOutput;
    try {
      output = await tool.run(input, { signal: control.controller.signal });
    } catch (error) {
      if (!control.alive()) return "cancelled";
      if (control.controller.signal.aborted) {
        cancelOpenCalls(host);
        return "cancelled";
      }
      const message = error instanceof Error ? error.message : String(error);
      finish(host, open.assistantIndex, call, item, resultBlock(call, message, true), "failed");
      continue;
    }
    if (!control.alive()) return "cancelled";
    const isError = output.isError === true;
    const done: ItemOfType<"tool"> = { ...item, status: isError ? "failed" : "succeeded" };
    if (output.statusText !== undefined) done.statusText = output.statusText;
    if (output.summary !== undefined) done.summary = output.summary;
    finish(
      host,
      open.assistantIndex,
      call,
      done,
      resultBlock(call, output.content, isError),
      done.status,
    );
    appendImages(host, open.assistantIndex, call.name, output);
    if (output.generatedImages !== undefined) host.recordGeneratedImages(output.generatedImages);
  }
}

function needsApproval(tool: HostTool, input: ToolCallInput): boolean {
  const rule = tool.needsApproval;
  return typeof rule === "function" ? rule(input) : rule === true;
}

function finish(
  host: TurnHost,
  assistantIndex: number,
  call: ToolCallBlock,
  item: ItemOfType<"tool">,
  result: ToolResultBlock,
  status: ItemOfType<"tool">["status"],
): void {
  appendResult(host.state.history, assistantIndex, result);
  replaceItem(host.state.items, { ...item, status });
  host.update();
}

/**
 * Gives every open tool call a "cancelled" result (and denies its pending approval), so that no
 * tool call stays in history without its result.
 */
export function cancelOpenCalls(host: TurnHost): void {
  for (;;) {
    const open = openToolCalls(host.state.history);
    const call = open?.calls[0];
    if (open === undefined || call === undefined) return;
    const approval = approvalItemFor(host, call);
    if (approval !== undefined && host.state.approvalCards.get(approval.id)?.state === "pending") {
      host.state.approvalCards.set(approval.id, { state: "denied" });
    }
    finish(
      host,
      open.assistantIndex,
      call,
      toolItemFor(host, call),
      resultBlock(call, CANCELLED_RESULT, true),
      "cancelled",
    );
  }
}
