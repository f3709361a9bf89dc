import { LEFT_OUT_SAMPLE_LINES } from "./line-sample.js";
import type { LeftOutEntry } from "./report.js";

/** Left-out entries of many files grouped by what and why, for a summary a person reads. */
export interface LeftOutTotal {
  readonly what: string;
  readonly reason: string;
  readonly lines: number;
  readonly files: number;
}

/** What an import left out, counted by kind. */
export function leftOutTotals(entries: readonly LeftOutEntry[]): LeftOutTotal[] {
  const totals = new Map<
    string,
    { what: string; reason: string; lines: number; files: Set<string> }
  >();
  for (const entry of entries) {
    const key = `${entry.what}\u0000${entry.reason}`;
    let total = totals.get(key);
    if (total === undefined) {
      total = { what: entry.what, reason: entry.reason, lines: 0, files: new Set() };
      totals.set(key, total);
    }
    total.lines += entry.count;
    total.files.add(entry.file);
  }
  return [...totals.values()]
    .map(({ files, ...rest }) => ({ ...rest, files: files.size }))
    .sort((a, b) => b.lines - a.lines || a.what.localeCompare(b.what));
}

/** The heading of a summary's left-out list (`--json` keeps a bounded sample of lines). */
export function leftOutHeading(unit: "line" | "record"): string {
  return `left out (each reported; --json lists every file, with the count and first ${LEFT_OUT_SAMPLE_LINES} ${unit} numbers of each):`;
}

/** A one-line progress bar: `[#####-----] 3/10 files, 1.2/4.0 MB, 120 messages`. */
export function progressLine(progress: {
  readonly files: number;
  readonly totalFiles: number;
  readonly bytes: number;
  readonly totalBytes: number;
  readonly messages: number;
}): string {
  const width = 24;
  const fraction =
    progress.totalBytes === 0 ? 1 : Math.min(1, progress.bytes / progress.totalBytes);
  const filled = Math.round(fraction * width);
  const megabytes = (bytes: number): string => (bytes / 1e6).toFixed(1);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${progress.files}/${progress.totalFiles} files, ${megabytes(progress.bytes)}/${megabytes(progress.totalBytes)} MB, ${progress.messages} messages`;
}
