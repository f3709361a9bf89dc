import type { Message } from "../history/message.js";
import type { CliBackend } from "./backend.js";
import type { TurnOutcome } from "./provider-turn.js";
import { replaceItem } from "./state.js";
import type { TurnControl, TurnHost } from "./turn-host.js";

export interface CliTurnHost extends TurnHost {
  recordCliTurn(backend: CliBackend, result: import("./backend.js").CliTurnResult): void;
}

/**
 * Runs one turn on a CLI backend. The user message is already in history; the backend's
 * reported history is appended after it (its leading copy of the user message skipped), so
 * the preamble of a restored session never reaches history or the panel (A25).
 */
export async function runCliTurn(
  host: CliTurnHost,
  backend: CliBackend,
  control: TurnControl,
  input: {
    readonly message: string;
    readonly userMessage: Message;
    readonly restoredTranscript?: string;
  },
): Promise<TurnOutcome> {
  const signal = control.controller.signal;
  let result;
  try {
    result = await backend.runTurn({
      message: input.message,
      userMessage: input.userMessage,
      images: (sha256) => host.imageStore.get(sha256),
      ...(input.restoredTranscript === undefined
        ? {}
        : { restoredTranscript: input.restoredTranscript }),
      signal,
      onItem: (item) => {
        if (!control.alive()) return;
        replaceItem(host.state.items, item);
        host.update();
      },
      newItemId: () => host.newId(),
    });
  } catch (error) {
    if (!control.alive() || signal.aborted) return "cancelled";
    const message = error instanceof Error ? error.message : String(error);
    host.state.items.push({ id: host.newId(), type: "failure", message });
    host.update();
    return "failed";
  }
  if (!control.alive()) return "cancelled";
  const messages = [...result.history];
  if (messages[0] !== undefined && sameMessage(messages[0], input.userMessage)) messages.shift();
  host.state.history.push(...messages);
  host.recordCliTurn(backend, result);
  if (result.failure !== undefined) {
    host.state.items.push({ id: host.newId(), type: "failure", message: result.failure });
  }
  host.update();
  if (result.cancelled === true || signal.aborted) return "cancelled";
  return result.failure === undefined ? "ended" : "failed";
}

function sameMessage(a: Message, b: Message): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
