import type { Command } from "../command.js";

/**
 * Every `verbatim` command (docs/cli.md lists them), loaded only when it runs so that a command
 * never pays for the modules of the others (the server's, the database drivers). Add new
 * commands here; a test checks that each entry's words are those of the command it loads.
 */
export interface CommandEntry {
  readonly words: readonly string[];
  load(): Promise<Command>;
}

export const commandEntries: readonly CommandEntry[] = [
  {
    words: ["format", "canonicalize"],
    load: async () => (await import("./format-canonicalize.js")).formatCanonicalize,
  },
  { words: ["archive", "show"], load: async () => (await import("./archive-show.js")).archiveShow },
  {
    words: ["archive", "check"],
    load: async () => (await import("./archive-check.js")).archiveCheck,
  },
  {
    words: ["archive", "resave"],
    load: async () => (await import("./archive-resave.js")).archiveResave,
  },
  { words: ["render"], load: async () => (await import("./render.js")).render },
  { words: ["cache-diff"], load: async () => (await import("./cache-diff.js")).cacheDiff },
  { words: ["compact"], load: async () => (await import("./compact.js")).compact },
  { words: ["db", "migrate"], load: async () => (await import("./db-migrate.js")).dbMigrate },
  {
    words: ["trajectory", "project"],
    load: async () => (await import("./trajectory-project.js")).trajectoryProject,
  },
  { words: ["serve"], load: async () => (await import("./serve.js")).serve },
  { words: ["keys", "create"], load: async () => (await import("./keys.js")).keysCreate },
  { words: ["keys", "revoke"], load: async () => (await import("./keys.js")).keysRevoke },
];
