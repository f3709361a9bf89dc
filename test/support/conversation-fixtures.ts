/** Shared pieces of the live-conversation tests: a price book, tools, a change recorder. */
import type { ChangeKind } from "../../packages/library/src/conversation/api.js";
import type { PriceBook } from "../../packages/library/src/conversation/prices.js";
import type { HostTool } from "../../packages/library/src/conversation/tools.js";

/** Prices in round numbers: $1 per million input tokens, $5 per million output, etc. */
export const testPrices: PriceBook = {
  contextWindow: (_provider, model) =>
    model === "small-model" ? 1_000 : model === "test-model" ? 100_000 : undefined,
  billsPerToken: (provider) => provider !== "subscription",
  requestCost: (_provider, model, usage) =>
    model === "unpriced-model"
      ? undefined
      : (usage.input * 1 + usage.output * 5 + usage.cacheRead * 0.1 + usage.cacheWrite * 1.25) /
        1_000_000,
  imageCost: (image) => (image.provider === "openai" ? 0.04 * (image.count ?? 1) : undefined),
};

export function counterIds(prefix = "ID"): () => string {
  let next = 0;
  return () => {
    next += 1;
    return `${prefix}-${next}`;
  };
}

export function changeRecorder(): { changes: ChangeKind[]; onChange: (kind: ChangeKind) => void } {
  const changes: ChangeKind[] = [];
  return { changes, onChange: (kind) => changes.push(kind) };
}

/** A tool that echoes its arguments. */
export const echoTool: HostTool = {
  name: "echo",
  description: "Returns its arguments.",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  run: async (call) => ({ content: call.argumentsText, statusText: "echoed" }),
};

/** A tool that needs the user's approval before it deletes anything. */
export function deleteTool(log: string[] = []): HostTool {
  return {
    name: "delete_page",
    description: "Deletes a page.",
    inputSchema: { type: "object", properties: { page: { type: "string" } } },
    needsApproval: true,
    approvalSummary: (call) => `Delete ${call.argumentsText}`,
    run: async (call) => {
      log.push(call.argumentsText);
      return { content: `{"deleted":true}`, statusText: "deleted" };
    },
  };
}
