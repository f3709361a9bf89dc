// The load-and-fault test of three servers (issue 34 item 5; docs/scale.md, "Fault test"):
//
//   node bin/run-ts.js bench/scale/fault.ts [--seconds 60] [--kill-every 10] [--seed N]
//
// Three `verbatim serve` processes on a fresh schema of VERBATIM_PG_URL's database (loopback
// only), a client spreading Responses calls, recorded /v1/messages sessions and job item
// appends across them, one server killed with `kill -9` and started again every --kill-every
// seconds. Prints a table of counts and each check's verdict; exits 1 when a check fails.
import { parseArgs } from "node:util";
import { runFaultTest, type FaultReport } from "./fault/run.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    "kill-every": { type: "string", default: "10" },
    seed: { type: "string" },
  },
});
const seconds = Number(values.seconds);
const killEvery = Number(values["kill-every"]);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!(seconds > 0 && killEvery > 0 && Number.isInteger(seed))) {
  process.stderr.write("usage: fault.ts [--seconds 60] [--kill-every 10] [--seed N]\n");
  process.exit(2);
}
if (!process.env["VERBATIM_PG_URL"]) {
  process.stderr.write(
    "fault.ts needs VERBATIM_PG_URL (e.g. postgres://postgres@127.0.0.1:5432/test): it runs in a fresh schema there\n",
  );
  process.exit(2);
}

const log = (line: string) => process.stdout.write(`${line}\n`);
log(`fault test: ${seconds} s, a server killed every ${killEvery} s, seed ${seed}`);
const report = await runFaultTest({ seconds, killEvery, seed, log });
printReport(report);
process.exit(report.passed ? 0 : 1);

function printReport(report: FaultReport): void {
  const pad = (text: string | number, width: number) => String(text).padStart(width);
  log("");
  log(
    `load ${(report.loadMs / 1000).toFixed(1)} s, ${report.kills} kills (kill -9; ${report.aimedKills} at their aim), ${report.starts} server starts; settled in ${(report.settleMs / 1000).toFixed(1)} s`,
  );
  const seconds = (times: readonly number[]) => times.map((at) => at.toFixed(1)).join(", ");
  log(
    `kills at ${seconds(report.killedAt)} s; the shared limits failed (500 ms) at ${seconds(report.sharedLimitsFailedAt) || "no time"}`,
  );
  const left = report.leftByKills;
  log(
    `right after the kills: ${left.map((one) => one.unplaced).join(", ")} recorded calls unplaced, ${left.map((one) => one.inProgress).join(", ")} responses in_progress`,
  );
  log("");
  log(
    `${"operations".padEnd(16)}${pad("sent", 7)}${pad("acked", 7)}${pad("attempts", 10)}${pad("refused", 9)}${pad("lost", 6)}${pad("429", 6)}${pad("other", 7)}${pad("gave up", 9)}`,
  );
  for (const [kind, counts] of report.counts) {
    log(
      `${kind.padEnd(16)}${pad(counts.operations, 7)}${pad(counts.acknowledged, 7)}${pad(counts.attempts, 10)}${pad(counts.refused, 9)}${pad(counts.connectionLost, 6)}${pad(counts.rateLimited, 6)}${pad(counts.unexpected, 7)}${pad(counts.givenUp, 9)}`,
    );
  }
  const { hammer } = report;
  log(
    `${"hammered key".padEnd(16)}${pad(hammer.admitted + hammer.limited + hammer.failed, 7)}${pad(hammer.admitted, 7)}${pad("", 10)}${pad(hammer.failed, 9)}${pad("", 6)}${pad(hammer.limited, 6)}`,
  );
  log("");
  log(
    `rows: ${Object.entries(report.rows)
      .map(([name, count]) => `${name} ${count}`)
      .join(", ")}`,
  );
  if (report.serverErrors.length > 0) {
    log(`the servers logged ${report.serverErrors.length} errors; the first:`);
    for (const line of report.serverErrors.slice(0, 5)) log(`  ${line.slice(0, 400)}`);
  }
  log("");
  for (const verdict of report.verdicts) {
    log(`${verdict.passed ? "PASS" : "FAIL"}  ${verdict.name}: ${verdict.detail}`);
    for (const problem of verdict.problems) log(`        ${problem}`);
    if (verdict.problemCount > verdict.problems.length) {
      log(`        … ${verdict.problemCount} problems in all`);
    }
  }
  log("");
  log(report.passed ? "all checks passed" : "FAILED");
}
