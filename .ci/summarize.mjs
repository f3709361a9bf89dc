// Prints "N passed, N failed, N skipped" from Vitest's JSON report (one line, last).
import { existsSync, readFileSync } from "node:fs";

const [file, status] = process.argv.slice(2);
if (!file || !existsSync(file)) {
  // The run stopped before the tests ran (type check or lint failed).
  console.log(`0 passed, ${status === "0" ? 0 : 1} failed`);
} else {
  const report = JSON.parse(readFileSync(file, "utf8"));
  const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  let failed = report.numFailedTests ?? 0;
  // A test file that fails to load fails no single test: count the file.
  if (failed === 0 && status !== "0") failed = Math.max(1, report.numFailedTestSuites ?? 0);
  console.log(`${report.numPassedTests ?? 0} passed, ${failed} failed, ${skipped} skipped`);
}
