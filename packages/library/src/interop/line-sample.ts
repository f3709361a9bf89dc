/**
 * How many line numbers a left-out entry keeps: the rest are counted only, so that reporting a
 * file of millions of junk lines takes bounded memory.
 */
export const LEFT_OUT_SAMPLE_LINES = 1000;

/** The lines of one left-out fact: their count, and the first LEFT_OUT_SAMPLE_LINES of them. */
export class LineSample {
  count = 0;
  readonly lines: number[] = [];
  private last: number | undefined;

  /** Counts a line once (a line reported twice in a row counts once). */
  add(line: number): void {
    if (line === this.last) return;
    this.last = line;
    this.count++;
    if (this.lines.length < LEFT_OUT_SAMPLE_LINES) this.lines.push(line);
  }

  /** Counts `count` lines of which `lines` are the first. */
  addAll(count: number, lines: readonly number[]): void {
    this.count += count;
    for (const line of lines) {
      if (this.lines.length >= LEFT_OUT_SAMPLE_LINES) break;
      this.lines.push(line);
    }
    this.last = undefined;
  }
}
