import type { Command } from "../command.js";
import { loadServerCommand } from "../server-commands.js";

/**
 * Every `verbatim` command (docs/cli.md lists them). The table holds what `--help` prints
 * (words, usage, summary), so that listing the commands loads none of them; each command's
 * module is loaded only when it runs, so that a command never pays for the modules of the
 * others (the server's, the database drivers, zod). Add new commands here; a test checks that
 * each entry's words, usage and summary are those of the command it loads.
 */
export interface CommandEntry {
  /** The words that name it, e.g. ["archive", "show"]. */
  readonly words: readonly string[];
  /** One line: the arguments, e.g. `<package> [--json]`. */
  readonly usage: string;
  readonly summary: string;
  load(): Promise<Command>;
}

export const commandEntries: readonly CommandEntry[] = [
  {
    words: ["format", "canonicalize"],
    usage: "<conversation.json>",
    summary: "Decode a conversation.json (format 1) and write its canonical bytes to stdout.",
    load: async () => (await import("./format-canonicalize.js")).formatCanonicalize,
  },
  {
    words: ["archive", "show"],
    usage: "<package> [--json]",
    summary:
      "Describe the saved conversation of a package: readable or not, counts, images, usage.",
    load: async () => (await import("./archive-show.js")).archiveShow,
  },
  {
    words: ["archive", "check"],
    usage: "<package>",
    summary: "Exit 0 when agent/ is absent or readable format 1, 1 when it cannot be read.",
    load: async () => (await import("./archive-check.js")).archiveCheck,
  },
  {
    words: ["archive", "resave"],
    usage: "<package>",
    summary:
      "Open a package's conversation and save it with default settings; prints unchanged or rewritten.",
    load: async () => (await import("./archive-resave.js")).archiveResave,
  },
  {
    words: ["render"],
    usage:
      "<package> --provider anthropic|openai-chat|openai-responses|gemini|openrouter [--model M] [--system FILE] [--tools FILE] [--message TEXT]",
    summary:
      "Write the exact body of the next request (saved history plus a user message) to stdout.",
    load: async () => (await import("./render.js")).render,
  },
  {
    words: ["cache-diff"],
    usage: "<before.json> <after.json>",
    summary:
      "Check that the second request body extends the first as the prompt cache needs (A27).",
    load: async () => (await import("./cache-diff.js")).cacheDiff,
  },
  {
    words: ["compact"],
    usage: "<package> [--dry-run] [--json] [--provider <id>] [--model <name>]",
    summary:
      "Preview (--dry-run) or run the compaction of a package's saved conversation (A18–A22).",
    load: async () => (await import("./compact.js")).compact,
  },
  {
    words: ["cache-report"],
    usage: "--db <sqlite path | postgres url> [--subject S] [--since T] [--json]",
    summary:
      "Per recorded conversation (/v1/messages, /v1/chat/completions): calls, cache hit ratio, tokens and dollars lost to misses, and where each miss broke the prefix.",
    load: async () => await loadServerCommand("cache-report"),
  },
  {
    words: ["db", "migrate"],
    usage: "--db <sqlite path | postgres url> [--partitions N] [--json]",
    summary:
      "Create or upgrade the gateway store's tables (SQLite file or PostgreSQL database); --partitions N hash-partitions PostgreSQL's subject-owned tables by subject.",
    load: async () => await loadServerCommand("db migrate"),
  },
  {
    words: ["db", "index"],
    usage: "--db <sqlite path | postgres url> [--json]",
    summary:
      "Index now, for the console's search, the rows imports left for later (a running server does it in the background).",
    load: async () => await loadServerCommand("db index"),
  },
  {
    words: ["db", "prune"],
    usage:
      "--before <ISO time> [--subject S] --db <sqlite path | postgres url> [--dry-run] [--json]",
    summary:
      "Delete conversations (with their messages, recorded calls and jobs) whose last activity is before a time, and free the recorded bytes and images nothing refers to any more.",
    load: async () => await loadServerCommand("db prune"),
  },
  {
    words: ["db", "delete-subject"],
    usage: "<subject> --db <sqlite path | postgres url> [--dry-run] [--json]",
    summary:
      "Delete everything a subject owns: conversations, messages, recorded calls and their bytes, images, jobs and API keys.",
    load: async () => await loadServerCommand("db delete-subject"),
  },
  {
    words: ["trajectory", "project"],
    usage: "<file> --view chatml|model-visible [--page-limit BYTES]",
    summary:
      "Project stored job turn items (JSON Lines, one stored row per line) to ChatML or the model-visible view.",
    load: async () => (await import("./trajectory-project.js")).trajectoryProject,
  },
  {
    words: ["import"],
    usage:
      "claude-code|codex|gemini-cli|cline|opencode <path…> --into <package folder> | sqlite:<file> | postgres://… --subject S | swe-agent|openhands|inspect|codex <path…> --into <rows.jsonl> | sqlite:<file> | postgres://… --subject S [--as chain|job] [--index-now] [--jobs N] [--json]",
    summary:
      "Import Claude Code, Codex or Gemini CLI sessions or Cline (Roo Code, Kilo Code) tasks into format-1 packages or gateway chains (one per conversation; --jobs N threads at once, default the machine's cores up to 4), or agent trajectories into stored rows or background-agent jobs; re-runs change nothing.",
    load: async () => (await import("./import.js")).importCommand,
  },
  {
    words: ["export"],
    usage:
      "<package | folder of packages | rows.jsonl …> | --from sqlite:<file> | postgres://… --subject S (--conversation ID | --message ID | --job ID)… --to openai-jsonl|chatml-jsonl [--system FILE]",
    summary:
      "Write each package's history, conversation of a database or job turn (of a rows file or a database) as one JSON line, OpenAI fine-tuning or ChatML, to stdout; the same input gives the same bytes.",
    load: async () => (await import("./export.js")).exportCommand,
  },
  {
    words: ["serve"],
    usage: "[--db <sqlite path | postgres url>] [--host H] [--port P] [--upstream echo]",
    summary:
      "Run the HTTP server (console routes, Responses API, jobs, console page); migrates the database first.",
    load: async () => await loadServerCommand("serve"),
  },
  {
    words: ["keys", "create"],
    usage: "--subject <subject_uid> [--db <sqlite path | postgres url>] [--json]",
    summary:
      "Create an API key for a subject; prints the key alone on the last line (it works at once, also for a running server).",
    load: async () => await loadServerCommand("keys create"),
  },
  {
    words: ["keys", "revoke"],
    usage: "<key> [--db <sqlite path | postgres url>] [--json]",
    summary: "Revoke an API key; requests with it get 401 at once.",
    load: async () => await loadServerCommand("keys revoke"),
  },
];
