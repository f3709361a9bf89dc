import type { UnreadableLines } from "./jsonl.js";
import { LineSample } from "./line-sample.js";

/** What an import left out, grouped by what and why, with the lines it concerns. */
export interface LeftOutEntry {
  readonly file: string;
  /** What was left out, e.g. `progress line`, `thinking signature`. */
  readonly what: string;
  /** Why, in words a user can act on. */
  readonly reason: string;
  /** How many lines (or records) it concerns (0 for whole-file facts). */
  readonly count: number;
  /** The first of those 1-based line numbers, at most LEFT_OUT_SAMPLE_LINES. */
  readonly lines: readonly number[];
}

/** Every non-blank line of a source file: imported into a conversation, or left out. */
export interface FileAccount {
  readonly file: string;
  readonly lines: number;
  /** Lines that went (at least partly) into an imported conversation. */
  readonly imported: number;
  /** Lines left out as a whole (each appears in a left-out entry). */
  readonly leftOut: number;
}

/** Collects left-out facts, grouping equal (file, what, reason) entries. */
export class LeftOutLedger {
  private readonly entries = new Map<
    string,
    { entry: Omit<LeftOutEntry, "count" | "lines">; lines: LineSample }
  >();

  add(file: string, what: string, reason: string, line?: number): void {
    const lines = this.slot(file, what, reason);
    if (line !== undefined) lines.add(line);
  }

  /** Many lines of one fact at once: `count` of them, `lines` the first. */
  addAll(file: string, what: string, reason: string, count: number, lines: readonly number[]) {
    this.slot(file, what, reason).addAll(count, lines);
  }

  private slot(file: string, what: string, reason: string): LineSample {
    const key = `${file}\u0000${what}\u0000${reason}`;
    let slot = this.entries.get(key);
    if (slot === undefined) {
      slot = { entry: { file, what, reason }, lines: new LineSample() };
      this.entries.set(key, slot);
    }
    return slot.lines;
  }

  list(): LeftOutEntry[] {
    return [...this.entries.values()].map(({ entry, lines }) => ({
      ...entry,
      count: lines.count,
      lines: lines.lines,
    }));
  }
}

/** Tracks, per file, which lines were imported and which were left out as a whole. */
export class LineLedger {
  private readonly imported = new Map<string, Set<number>>();
  private readonly dropped = new Map<string, Set<number>>();
  private readonly totals = new Map<string, number>();
  /** Lines left out before they were read as objects: never imported, so counted only. */
  private readonly unreadable = new Map<string, number>();

  constructor(readonly leftOut: LeftOutLedger) {}

  file(file: string, lines: number): void {
    this.totals.set(file, lines);
  }

  importedLine(file: string, line: number): void {
    setOf(this.imported, file).add(line);
  }

  leftOutLine(file: string, line: number, what: string, reason: string): void {
    setOf(this.dropped, file).add(line);
    this.leftOut.add(file, what, reason, line);
  }

  /** Lines that are not JSON objects (readJsonLines's groups), counted without a set. */
  unreadableLines(file: string, groups: readonly UnreadableLines[]): void {
    for (const group of groups) {
      this.unreadable.set(file, (this.unreadable.get(file) ?? 0) + group.count);
      this.leftOut.addAll(file, "unreadable line", group.reason, group.count, group.lines);
    }
  }

  accounts(): FileAccount[] {
    return [...this.totals].map(([file, lines]) => {
      const imported = this.imported.get(file) ?? new Set<number>();
      const dropped = this.dropped.get(file) ?? new Set<number>();
      let leftOut = this.unreadable.get(file) ?? 0;
      for (const line of dropped) if (!imported.has(line)) leftOut++;
      return { file, lines, imported: imported.size, leftOut };
    });
  }
}

function setOf(map: Map<string, Set<number>>, key: string): Set<number> {
  let set = map.get(key);
  if (set === undefined) {
    set = new Set();
    map.set(key, set);
  }
  return set;
}

/** What a compaction boundary leaves only in the source (the panel keeps the rest). */
export function reportCompaction(
  results: number,
  leaveOut: (what: string, reason: string) => void,
): void {
  if (results === 0) return;
  leaveOut(
    "tool result content before a compaction boundary",
    `${results} tool result(s) were in the history the compaction replaced by its summary: the panel keeps their calls and status, format 1 has no place for the content of a result outside the history`,
  );
}
