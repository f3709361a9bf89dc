/**
 * Child process of the byte-exact replay test (A26): opens a saved package in a fresh process,
 * renders the next request (the saved history plus one user message) and sends it to the
 * local provider server named on the command line.
 * Usage: node bin/run-ts.js test/support/replay-next-request.ts <package> <provider> <baseUrl>
 */
import { openArchive } from "../../packages/library/src/archive/index.js";
import type { Message } from "../../packages/library/src/history/index.js";
import {
  renderRequest,
  sendRound,
  type ProviderId,
} from "../../packages/library/src/providers/index.js";
import { NEXT_USER_TEXT, replayOptions } from "./replay-options.js";

const [folder = "", providerName = "", baseUrl = ""] = process.argv.slice(2);
const provider = providerName as ProviderId;
const opened = await openArchive(folder);
if (opened.notices.length > 0)
  throw new Error(`unexpected notice: ${opened.notices[0]?.text ?? ""}`);
const saved = opened.conversation.history;
const history: Message[] = [
  ...saved,
  { role: "user", content: [{ type: "text", text: NEXT_USER_TEXT }] },
];
const { body } = renderRequest(provider, {
  history,
  images: (sha256) => opened.images.get(sha256),
  options: replayOptions(provider, saved.length),
});
const options = replayOptions(provider, saved.length);
await sendRound(
  { provider, model: options.model, body, stream: true },
  { apiKey: "test-key", baseUrl, maxRetries: 0 },
);
process.stdout.write("sent\n");
