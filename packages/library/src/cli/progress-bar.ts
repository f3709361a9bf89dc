import type { ImportProgress } from "../interop/index.js";
import { progressLine } from "../interop/summary.js";
import type { CliIO } from "./io.js";

/** A progress bar's listener (undefined when nothing is drawn) and the end of its line. */
export interface ImportProgressBar {
  readonly onProgress?: (progress: ImportProgress) => void;
  finish(): void;
}

/**
 * An import's progress bar on stderr (files, bytes, messages), redrawn in place on a terminal
 * only: with `--json` or when stderr is not a terminal, `onProgress` is undefined and nothing
 * is written. `finish` ends the bar's line.
 */
export function importProgressBar(io: CliIO, json: boolean): ImportProgressBar {
  if (json || io.stderrIsTTY !== true) return { finish: () => undefined };
  let drawn = false;
  return {
    onProgress: (progress) => {
      drawn = true;
      io.stderr(`\r${progressLine(progress)}`);
    },
    finish: () => {
      if (drawn) io.stderr("\n");
    },
  };
}
