// A local Anthropic-format upstream in its own process (test/support/anthropic-upstream.ts),
// so the server and the load generator do not share its event loop. Prints its URL.
import { startAnthropicUpstream } from "../../test/support/anthropic-upstream.js";

const upstream = await startAnthropicUpstream();
upstream.reply = () => ({ text: "The answer is forty-two, as computed from the input." });
process.stdout.write(`${upstream.url}\n`);
process.on("SIGTERM", () => void upstream.close().then(() => process.exit(0)));
