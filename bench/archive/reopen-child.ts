// Run in a fresh process by bench/archive/run.ts: reopens a package (every image verified) and
// measures the physical reference in the same process (read + JSON.parse of conversation.json,
// read + SHA-256 of every image file). Prints one JSON line.
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { openArchive } from "../../packages/library/src/archive/index.js";

const packageDir = process.argv[2] ?? "";
const rounds = Number(process.argv[3] ?? "5");

async function physicalReference(): Promise<number> {
  const started = performance.now();
  JSON.parse(await readFile(join(packageDir, "agent", "conversation.json"), "utf8"));
  const folder = join(packageDir, "agent", "images");
  for (const name of await readdir(folder)) {
    createHash("sha256")
      .update(await readFile(join(folder, name)))
      .digest("hex");
  }
  return performance.now() - started;
}

async function reopen(): Promise<{ ms: number; messages: number; images: number }> {
  const started = performance.now();
  const opened = await openArchive(packageDir);
  const ms = performance.now() - started;
  return { ms, messages: opened.conversation.history.length, images: opened.images.size };
}

const first = await reopen();
const reopenTimes = [first.ms];
const referenceTimes: number[] = [];
for (let round = 0; round < rounds; round++) {
  referenceTimes.push(await physicalReference());
  if (round > 0) reopenTimes.push((await reopen()).ms);
}
process.stdout.write(
  JSON.stringify({
    firstReopenMs: first.ms,
    reopenMs: Math.min(...reopenTimes),
    referenceMs: Math.min(...referenceTimes),
    messages: first.messages,
    images: first.images,
  }) + "\n",
);
