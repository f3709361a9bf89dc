import type { CommandEntry } from "./commands/index.js";

/** Lines `  <words>  <summary>` aligned on the longest name. */
function commandList(entries: readonly CommandEntry[]): string[] {
  const width = Math.max(...entries.map((entry) => entry.words.join(" ").length));
  return entries.map((entry) => `  ${entry.words.join(" ").padEnd(width)}  ${entry.summary}`);
}

/** `verbatim --help`: every command, from the table alone (no command is loaded). */
export function mainHelp(entries: readonly CommandEntry[]): string {
  return [
    "verbatim: keep LLM agent conversations and trajectories verbatim.",
    "",
    "Usage: verbatim <command> [arguments]",
    "",
    "Commands:",
    ...commandList(entries),
    "",
    "Each command takes --help; --version prints the version. Exit codes: 0 ok, 1 check failed, 2 usage error. See docs/cli.md.",
    "",
  ].join("\n");
}

/** The commands of a group such as `keys` (["keys", "create"], ["keys", "revoke"]). */
export function groupEntries(entries: readonly CommandEntry[], group: string): CommandEntry[] {
  return entries.filter((entry) => entry.words.length > 1 && entry.words[0] === group);
}

/** `verbatim <group>`: the usage of each command of the group. */
export function groupHelp(group: string, entries: readonly CommandEntry[]): string {
  return [
    `Usage: verbatim ${group} <command> [arguments]`,
    "",
    "Commands:",
    ...commandList(entries),
    "",
    ...entries.map((entry) => `verbatim ${entry.words.join(" ")} ${entry.usage}`),
    "",
    `Each command takes --help. See docs/cli.md.`,
    "",
  ].join("\n");
}

/** `verbatim <command> --help`. */
export function commandHelp(entry: CommandEntry): string {
  return `Usage: verbatim ${entry.words.join(" ")} ${entry.usage}\n\n${entry.summary}\n`;
}
