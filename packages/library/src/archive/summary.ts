import { resolve } from "node:path";
import type { Cost, Usage } from "../format/conversation-schema.js";
import { requirePackageFolder } from "./archive-errors.js";
import { entryAt } from "./disk.js";
import { imageFileName, packagePaths } from "./layout.js";
import { readAgentFolder } from "./read.js";

/** What `verbatim archive show --json` prints (keys fixed in docs/cli.md). */
export interface PackageSummary {
  package: string;
  agentFolder: boolean;
  readable: boolean;
  reason: string | null;
  formatVersion: number | null;
  provider: string | null;
  model: string | null;
  items: { total: number; byType: Record<string, number> };
  historyMessages: number;
  blocks: { total: number; byType: Record<string, number> };
  turns: number;
  queued: number;
  unsent: number;
  images: { kept: number; keptBytes: number; omitted: number; unreadable: number };
  usage: Usage | null;
  lastRoundUsage: Usage | null;
  estimatedCost: Cost | null;
}

function countBy(values: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * Reads a package's `agent/` without changing anything and describes it: readable or not (and
 * why), version, provider, model, counts, images and usage. Images are counted as they read
 * (A15): a block whose file is missing or wrong counts as omitted and as unreadable.
 */
export async function summarizePackage(packageDir: string): Promise<PackageSummary> {
  const paths = packagePaths(resolve(packageDir));
  await requirePackageFolder(paths.packageDir);
  const read = await readAgentFolder(paths);
  const agentFolder = (await entryAt(paths.agentDir)).kind !== "absent";
  const conversation = read.conversation;
  const readable = read.state !== "unreadable";
  const present = read.state === "readable";
  const blocks = conversation.history.flatMap((message) => message.content);
  let keptBytes = 0;
  const kept = new Set<string>();
  for (const block of blocks) {
    if (block.type !== "image") continue;
    const name = imageFileName(block.sha256, block.mimeType);
    if (kept.has(name)) continue;
    kept.add(name);
    keptBytes += read.images.get(block.sha256)?.length ?? 0;
  }
  return {
    package: paths.packageDir,
    agentFolder,
    readable,
    reason: read.unreadable?.message ?? null,
    formatVersion: present
      ? conversation.formatVersion
      : (read.unreadable?.decode?.foundVersion ?? null),
    provider: present ? (conversation.provider ?? null) : null,
    model: present ? (conversation.model ?? null) : null,
    items: {
      total: conversation.items.length,
      byType: countBy(conversation.items.map((item) => item.type)),
    },
    historyMessages: conversation.history.length,
    blocks: { total: blocks.length, byType: countBy(blocks.map((block) => block.type)) },
    turns: conversation.sentFacts.length,
    queued: conversation.queued.length,
    unsent: conversation.unsent.length,
    images: {
      kept: kept.size,
      keptBytes,
      omitted: blocks.filter((block) => block.type === "imageOmitted").length,
      unreadable: read.unreadableImageBlocks,
    },
    usage: present ? conversation.usage : null,
    lastRoundUsage: present ? (conversation.lastRoundUsage ?? null) : null,
    estimatedCost: present ? conversation.estimatedCost : null,
  };
}
