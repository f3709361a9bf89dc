import type { TrajectoryItem } from "../../trajectory/items.js";
import type { StoredTurnItem } from "../../trajectory/row.js";
import { defaultSanitizer } from "../../trajectory/sanitizer.js";
import type { ModelUsage } from "../../trajectory/usage.js";
import { LeftOutLedger } from "../report.js";
import type { UnreadableLines } from "../jsonl.js";
import type { FileAccount, LeftOutEntry } from "../report.js";

/** The job-trajectory sources verbatim imports (docs/interop.md). */
export const TRAJECTORY_SOURCES = ["swe-agent", "openhands", "inspect"] as const;
/**
 * The sources whose files import as trajectory rows (`importTrajectoryFile`, `importIntoRowsFile`,
 * `verbatim import --into <file>.jsonl`): the job-trajectory sources and codex.
 */
export const ROWS_TARGET_SOURCES = [...TRAJECTORY_SOURCES, "codex"] as const;
/** The tools whose files import as trajectory rows: swe-agent, openhands, inspect or codex. */
export type TrajectorySource = (typeof ROWS_TARGET_SOURCES)[number];

/**
 * What one trajectory file gave: stored rows (one turn per run or sample), what was left out,
 * and the account of its records (messages or events): each imported or reported.
 */
export interface TrajectoryFileImport {
  readonly rows: readonly StoredTurnItem[];
  readonly leftOut: readonly LeftOutEntry[];
  readonly account: FileAccount;
  /**
   * The run totals the file records, by turn id (one entry per model): SWE-agent's model stats,
   * OpenHands' metrics, Inspect's sample `model_usage`. They go on the job, not on any turn item.
   */
  readonly jobUsage?: ReadonlyMap<string, readonly ModelUsage[]>;
}

/**
 * Builds the stored rows of one turn as the store would hold them (SPEC B7): positions from 0,
 * revision 1, item keys from the source's own record numbers, every item through the default
 * sanitizer (a replaced secret marks the item `redacted`).
 */
export class TurnRowsBuilder {
  private readonly list: StoredTurnItem[] = [];

  constructor(readonly turnId: string) {}

  /** Appends an item; `usage` is that of the model call the item is the first product of. */
  add(itemKey: string, item: TrajectoryItem, usage?: ModelUsage): void {
    const sanitized = defaultSanitizer.sanitizeItem(
      usage === undefined ? item : { ...item, usage },
    ).value;
    this.list.push({
      turn_id: this.turnId,
      position: this.list.length,
      revision: 1,
      item_key: itemKey.slice(0, 200),
      item: sanitized,
    });
  }

  get rows(): readonly StoredTurnItem[] {
    return this.list;
  }
}

/** Counts a file's records: each imported or left out (with the ledger's reason). */
export class RecordLedger {
  readonly leftOut = new LeftOutLedger();
  private imported = 0;
  private dropped = 0;
  private total = 0;

  constructor(readonly file: string) {}

  importedRecord(): void {
    this.total++;
    this.imported++;
  }

  leftOutRecord(record: number, what: string, reason: string): void {
    this.total++;
    this.dropped++;
    this.leftOut.add(this.file, what, reason, record);
  }

  /** Lines that are not JSON objects (readJsonLines's groups), counted. */
  unreadableRecords(groups: readonly UnreadableLines[]): void {
    for (const group of groups) {
      this.total += group.count;
      this.dropped += group.count;
      this.leftOut.addAll(this.file, "unreadable line", group.reason, group.count, group.lines);
    }
  }

  /** A part of an imported record that was left out (the record still counts as imported). */
  leftOutPart(record: number | undefined, what: string, reason: string): void {
    this.leftOut.add(this.file, what, reason, record);
  }

  result(
    rows: readonly StoredTurnItem[],
    jobUsage?: ReadonlyMap<string, readonly ModelUsage[]>,
  ): TrajectoryFileImport {
    return {
      rows,
      ...(jobUsage === undefined || jobUsage.size === 0 ? {} : { jobUsage }),
      leftOut: this.leftOut.list(),
      account: {
        file: this.file,
        lines: this.total,
        imported: this.imported,
        leftOut: this.dropped,
      },
    };
  }
}
