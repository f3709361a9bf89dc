/**
 * A provider backend that answers from a script instead of a network: each round takes the next
 * step, records the request it was given (history copied, tools, signal) and streams the step's
 * text before returning. It implements the conversation's `ProviderBackend` interface exactly;
 * the tests of the provider layer itself run against local HTTP servers instead.
 */
import type {
  ProviderBackend,
  BackendRoundRequest,
  BackendRoundResult,
} from "../../packages/library/src/conversation/backend.js";
import type { Usage } from "../../packages/library/src/format/conversation-schema.js";
import type { Block, Message } from "../../packages/library/src/history/message.js";

export type ScriptStep =
  | {
      readonly text?: string;
      readonly calls?: readonly { id: string; name: string; arguments: string }[];
      readonly usage?: Partial<Usage>;
      /** Waits for this promise before answering (to cancel or queue mid-turn). */
      readonly wait?: Promise<void>;
    }
  | { readonly fail: string }
  | ((request: BackendRoundRequest) => Promise<BackendRoundResult> | BackendRoundResult);

export interface ScriptedBackend extends ProviderBackend {
  readonly requests: { history: Message[]; tools: string[]; system: string | undefined }[];
  push(...steps: ScriptStep[]): void;
}

export function usage(partial: Partial<Usage> = {}): Usage {
  return { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, webSearchRequests: 0, ...partial };
}

export function scriptedBackend(
  steps: ScriptStep[] = [],
  provider = "anthropic",
  model = "test-model",
): ScriptedBackend {
  const queue = [...steps];
  const requests: ScriptedBackend["requests"] = [];
  return {
    kind: "provider",
    provider,
    model,
    requests,
    push: (...more) => queue.push(...more),
    async round(request) {
      requests.push({
        history: [...request.history],
        tools: request.tools.map((tool) => tool.name),
        system: request.system,
      });
      const step = queue.shift();
      if (step === undefined) throw new Error("the script has no step left");
      if (typeof step === "function") return step(request);
      if ("fail" in step) throw new Error(step.fail);
      if (step.text !== undefined) request.onEvent({ type: "text", text: step.text });
      for (const call of step.calls ?? []) {
        request.onEvent({ type: "toolCall", id: call.id, name: call.name });
      }
      if (step.wait !== undefined) {
        await Promise.race([
          step.wait,
          new Promise<void>((_, reject) => {
            request.signal.addEventListener("abort", () => reject(new Error("aborted")));
          }),
        ]);
      }
      const content: Block[] = [];
      if (step.text !== undefined) content.push({ type: "text", text: step.text });
      for (const call of step.calls ?? []) {
        content.push({ type: "toolCall", id: call.id, name: call.name, arguments: call.arguments });
      }
      return {
        message: { role: "assistant", content },
        usage: usage(step.usage),
        stopReason: (step.calls ?? []).length > 0 ? "tool_use" : "end",
      };
    },
  };
}

/** A promise with its resolve function, to hold a round open. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
