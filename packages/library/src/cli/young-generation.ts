/**
 * V8 grows its young generation (where new objects are made) up to its largest size, about
 * 130 MB on a 64-bit machine with enough memory, whenever many new objects outlive a garbage
 * collection, as every value read from a large `conversation.json` does: that alone is more than
 * the file's size in resident memory (docs/archive.md, "Memory"). The `verbatim` command owns
 * its process, so when it reads a large conversation it keeps the young generation at its
 * starting size. A library does not change its caller's process-wide engine settings; an
 * application that embeds it chooses its own (docs/archive.md).
 */
export const YOUNG_GENERATION_FLAG = "--semi-space-growth-factor=1";

/**
 * From this size of `conversation.json` on (the size from which the archive reads it in chunks,
 * format/quick-decode.ts). Below it the setting is not applied: loading the engine's settings
 * module costs a short command about 5% of `node -e 0` (bench/cli).
 */
export const LARGE_CONVERSATION_BYTES = 8 * 1024 * 1024;

/**
 * Applies YOUNG_GENERATION_FLAG when an argument of the command (after its first word) is a file
 * of at least LARGE_CONVERSATION_BYTES or a package whose `agent/conversation.json` is; never
 * for `serve`. Returns whether it did. For the `verbatim` executable only, before the command
 * runs; `cwd` resolves relative paths as the command does.
 */
export function keepYoungGenerationSmall(argv: readonly string[], cwd: string): boolean {
  if (argv[0] === "serve") return false;
  const { statSync } = process.getBuiltinModule("node:fs");
  const { resolve } = process.getBuiltinModule("node:path");
  const large = (path: string): boolean => {
    const info = statSync(path, { throwIfNoEntry: false });
    return info !== undefined && info.isFile() && info.size >= LARGE_CONVERSATION_BYTES;
  };
  const readsLarge = argv.slice(1).some((word) => {
    if (word.startsWith("-")) return false;
    const path = resolve(cwd, word);
    try {
      return large(path) || large(resolve(path, "agent", "conversation.json"));
    } catch {
      return false;
    }
  });
  if (!readsLarge) return false;
  // Read by V8 each time it would grow the young generation, so it applies from here on.
  process.getBuiltinModule("node:v8").setFlagsFromString(YOUNG_GENERATION_FLAG);
  return true;
}
