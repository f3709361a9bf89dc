// Prints "N passed, N failed, N skipped" from Vitest's JSON reports (one line, last): the main
// run's, then any more given (the partitioned PostgreSQL pass), added up.
import { existsSync, readFileSync } from "node:fs";

const [file, status, ...more] = process.argv.slice(2);
if (!file || !existsSync(file)) {
  // The run stopped before the tests ran (type check or lint failed).
  console.log(`0 passed, ${status === "0" ? 0 : 1} failed`);
} else {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let failedSuites = 0;
  for (const one of [file, ...more].filter((name) => existsSync(name))) {
    const report = JSON.parse(readFileSync(one, "utf8"));
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
    failedSuites += report.numFailedTestSuites ?? 0;
  }
  // A test file that fails to load fails no single test: count the file.
  if (failed === 0 && status !== "0") failed = Math.max(1, failedSuites);
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
}
