/**
 * Reopens a package in a fresh process and sends one message through the real provider layer:
 * `node bin/run-ts.js test/support/conversation-child.ts <package> <baseUrl> <message>`.
 * The sections and tools are the ones test/conversation/provider-layer.test.ts uses.
 */
import { openLiveConversation } from "../../packages/library/src/conversation/open.js";
import { providerBackend } from "../../packages/library/src/conversation/provider-backend.js";
import { echoTool } from "./conversation-fixtures.js";

export const CHILD_SYSTEM = "You design posters.";
export const childSections = () => [
  { name: "Design system", content: "Colours: red, black.\nFont: Inter." },
  { name: "Document", content: "Page 1: a poster." },
];

const [packageDir, baseUrl, message] = process.argv.slice(2);
if (packageDir !== undefined && baseUrl !== undefined && message !== undefined) {
  const opened = await openLiveConversation(packageDir, {
    backend: providerBackend({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      transport: { baseUrl, apiKey: "sk-ant-local", maxRetries: 0 },
    }),
    system: CHILD_SYSTEM,
    sections: childSections,
    tools: [echoTool],
  });
  opened.conversation.send(message);
  await opened.conversation.whenIdle();
  await opened.save();
}
