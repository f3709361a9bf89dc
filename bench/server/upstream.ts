// A local Anthropic-format upstream in its own process (test/support/anthropic-upstream.ts),
// so the server and the load generator do not share its event loop. Prints its URL.
// `--delay-ms N`: it answers N ms after a request arrives, a stand-in for a model's time to
// first token. The wait is exact to a few microseconds: a timer alone fires on the event loop's
// millisecond clock, up to a millisecond late or early depending on when in a millisecond the
// request came, which moved the measured p50s by as much as the overhead being measured. So a
// timer sleeps until 2 ms before the deadline, then the thread sleeps in the kernel
// (Atomics.wait, a futex with a fractional timeout) until the deadline itself.
import { parseArgs } from "node:util";
import { startAnthropicUpstream } from "../../test/support/anthropic-upstream.js";

const { values } = parseArgs({ options: { "delay-ms": { type: "string", default: "0" } } });
const upstream = await startAnthropicUpstream();
upstream.reply = () => ({ text: "The answer is forty-two, as computed from the input." });
upstream.delayMs = Number(values["delay-ms"]);
const cell = new Int32Array(new SharedArrayBuffer(4));
upstream.waitUntil = async (deadline) => {
  const early = deadline - 2 - performance.now();
  if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
  const left = deadline - performance.now();
  if (left > 0) Atomics.wait(cell, 0, 0, left);
};
process.stdout.write(`${upstream.url}\n`);
process.on("SIGTERM", () => void upstream.close().then(() => process.exit(0)));
