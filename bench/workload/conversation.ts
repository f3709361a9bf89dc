// The seeded conversation workload of the benchmarks (issue "archive"): N turns, each a user
// message (~200 characters, some Japanese and emoji), an assistant message (~300 characters and
// 2 tool calls with ~300-byte JSON arguments), a tool message with 2 results (~2 KB each) and a
// final assistant text (~500 characters); every 10th user message carries a 100 KB image.
import { sha256Hex } from "../../packages/library/src/core/hash.js";
import { emptyConversation } from "../../packages/library/src/format/empty.js";
import type { SavedConversation } from "../../packages/library/src/format/conversation-schema.js";
import type { Item } from "../../packages/library/src/format/items.js";
import type { Message } from "../../packages/library/src/history/message.js";

export interface Workload {
  readonly conversation: SavedConversation;
  readonly images: Map<string, Uint8Array>;
  /** The seeded random source; appendTurn continues from it. */
  readonly random: () => number;
}

export interface WorkloadOptions {
  readonly turns: number;
  readonly seed?: number;
  readonly imageEvery?: number;
  readonly imageBytes?: number;
}

/** mulberry32: a small, fast, seeded PRNG. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "card",
  "layout",
  "colour",
  "grid",
  "spacing",
  "headline",
  "image",
  "poster",
  "margin",
  "font",
  "デザイン",
  "カード",
  "余白",
  "見出し",
  "画像",
  "配置",
  "色",
  "文字",
  "🎨",
  "✨",
  "📐",
  "🙂",
];

function text(random: () => number, length: number): string {
  let out = "";
  while (out.length < length) {
    out += (out === "" ? "" : " ") + WORDS[Math.floor(random() * WORDS.length)];
  }
  out = out.slice(0, length);
  // Never end on half of a surrogate pair (an emoji cut in two).
  const last = out.charCodeAt(out.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? out.slice(0, -1) : out;
}

function jsonArguments(random: () => number, bytes: number): string {
  const operations: string[] = [];
  let out = "";
  while (out.length < bytes) {
    operations.push(`node-${Math.floor(random() * 1e6)}:${text(random, 24)}`);
    out = JSON.stringify({ operations, parent: "frame-1", dryRun: false });
  }
  return out;
}

function imageBytes(random: () => number, size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let index = 8; index < size; index += 4) {
    const value = (random() * 4294967296) >>> 0;
    bytes[index] = value & 0xff;
    bytes[index + 1] = (value >>> 8) & 0xff;
    bytes[index + 2] = (value >>> 16) & 0xff;
    bytes[index + 3] = value >>> 24;
  }
  return bytes;
}

/** Appends turn number `turn` (0-based) to the workload: new objects only, old ones untouched. */
export function appendTurn(
  workload: Workload,
  turn: number,
  options: Omit<WorkloadOptions, "turns"> = {},
): void {
  const { random, conversation, images } = workload;
  const imageEvery = options.imageEvery ?? 10;
  const size = options.imageBytes ?? 100_000;
  const id = (kind: string, index = 0): string => `${kind}-${turn}-${index}`;
  const userText = text(random, 200);
  const userContent: Message["content"][number][] = [{ type: "text", text: userText }];
  const withImage = imageEvery > 0 && turn % imageEvery === imageEvery - 1;
  if (withImage) {
    const bytes = imageBytes(random, size);
    const sha256 = sha256Hex(bytes);
    images.set(sha256, bytes);
    userContent.push({ type: "image", sha256, mimeType: "image/png" });
  }
  const start = conversation.history.length;
  const calls = [0, 1].map((index) => ({
    type: "toolCall" as const,
    id: `toolu_${turn}_${index}`,
    name: index === 0 ? "batch_design" : "read_document",
    arguments: jsonArguments(random, 300),
  }));
  const messages: Message[] = [
    { role: "user", content: userContent },
    { role: "assistant", content: [{ type: "text", text: text(random, 300) }, ...calls] },
    {
      role: "tool",
      content: calls.map((call) => ({
        type: "toolResult" as const,
        callID: call.id,
        toolName: call.name,
        isError: false,
        content: JSON.stringify({ result: text(random, 2000) }),
      })),
    },
    { role: "assistant", content: [{ type: "text", text: text(random, 500) }] },
  ];
  conversation.history.push(...messages);
  const items: Item[] = [
    { id: id("user"), type: "user", text: userText, ...(withImage ? { hasImage: true } : {}) },
    ...calls.map((call, index): Item => ({
      id: id("tool", index),
      type: "tool",
      name: call.name,
      status: "succeeded",
      callID: call.id,
      summary: "Updated the document",
    })),
    {
      id: id("assistant"),
      type: "assistant",
      text: (messages[3]?.content[0] as { text: string }).text,
    },
  ];
  conversation.items.push(...items);
  conversation.sentFacts.push({ message: start });
  const usage = conversation.usage;
  usage.input += 1200;
  usage.output += 400;
  usage.cacheRead += 1000 * turn;
  usage.cacheWrite += 1500;
  conversation.lastRoundUsage = {
    input: 1200,
    output: 400,
    cacheRead: 1000 * turn,
    cacheWrite: 1500,
    webSearchRequests: 0,
  };
}

/** A seeded conversation of `turns` turns with its image bytes. */
export function generateConversation(options: WorkloadOptions): Workload {
  const conversation = emptyConversation();
  conversation.provider = "anthropic";
  conversation.model = "claude-sonnet-4-5";
  conversation.estimatedCost = { kind: "estimated", dollars: 0 };
  const workload: Workload = {
    conversation,
    images: new Map(),
    random: seededRandom(options.seed ?? 1),
  };
  for (let turn = 0; turn < options.turns; turn++) appendTurn(workload, turn, options);
  return workload;
}
