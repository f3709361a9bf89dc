// A local Anthropic-format upstream in its own process (test/support/anthropic-upstream.ts),
// so the server and the load generator do not share its event loop. Prints its URL.
// `--delay-ms N`: it waits N ms before answering, a stand-in for a model's time to first token.
import { parseArgs } from "node:util";
import { startAnthropicUpstream } from "../../test/support/anthropic-upstream.js";

const { values } = parseArgs({ options: { "delay-ms": { type: "string", default: "0" } } });
const upstream = await startAnthropicUpstream();
upstream.reply = () => ({ text: "The answer is forty-two, as computed from the input." });
upstream.delayMs = Number(values["delay-ms"]);
process.stdout.write(`${upstream.url}\n`);
process.on("SIGTERM", () => void upstream.close().then(() => process.exit(0)));
