import { describe, expect, it } from "vitest";
import { leftOutTotals, progressLine } from "../../packages/library/src/internal/index.js";

describe("import summary and progress bar", () => {
  it("the progress bar shows files, megabytes and messages, filled by the bytes read", () => {
    expect(
      progressLine({ files: 3, totalFiles: 10, bytes: 1.2e6, totalBytes: 4e6, messages: 120 }),
    ).toBe("[#######-----------------] 3/10 files, 1.2/4.0 MB, 120 messages");
    expect(progressLine({ files: 0, totalFiles: 0, bytes: 0, totalBytes: 0, messages: 0 })).toBe(
      "[########################] 0/0 files, 0.0/0.0 MB, 0 messages",
    );
  });

  it("left-out entries of many files are grouped by what and why, most lines first", () => {
    const totals = leftOutTotals([
      { file: "a", what: "progress line", reason: "live output", count: 2, lines: [1, 2] },
      { file: "b", what: "progress line", reason: "live output", count: 1, lines: [7] },
      { file: "b", what: "thinking signature", reason: "signed", count: 4, lines: [3, 4, 5, 6] },
    ]);
    expect(totals).toEqual([
      { what: "thinking signature", reason: "signed", lines: 4, files: 1 },
      { what: "progress line", reason: "live output", lines: 3, files: 2 },
    ]);
  });
});
