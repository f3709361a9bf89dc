import { canonicalJson, sha256 } from "./chain-matching.js";
import { record, text, type Json } from "./json-members.js";

/**
 * The ids of a recorded Gemini call's function calls (docs/server/recorded-calls.md, "Gemini").
 * A Gemini `functionCall` may carry no `id` (the API's own calls have none before Gemini 3), and
 * its `functionResponse` then names the call by its function's name only. The gateway messages
 * need one id per call, the same in the answer (read from the response) and in the next
 * request that gives that answer back (read from its `model` content), so that the answer is
 * stored once. A client may give an id of its own to a call the answer had none for (Gemini CLI
 * names it `<function>_<time>_<n>` in the history it sends back), so every call is named by what
 * both sides hold, the model message's answer text, its calls (name and arguments) and the
 * call's place among them; a response naming a call by its wire id is mapped to that name.
 */

/** A `functionCall` of a model content: its own id (when it has one), name and arguments. */
export interface GeminiFunctionCall {
  readonly id: string | undefined;
  readonly name: string;
  readonly args: unknown;
}

/** The function calls and the answer text (thought parts left out) of a list of parts. */
export function callsAndText(parts: readonly unknown[]): {
  readonly calls: GeminiFunctionCall[];
  readonly text: string;
} {
  const calls: GeminiFunctionCall[] = [];
  let answer = "";
  for (const entry of parts) {
    const part = record(entry);
    const call = record(part?.["functionCall"]);
    if (call !== undefined) {
      const id = call["id"];
      calls.push({
        id: typeof id === "string" && id !== "" ? id : undefined,
        name: text(call["name"]),
        args: call["args"] ?? {},
      });
    } else if (part?.["thought"] !== true && typeof part?.["text"] === "string") {
      answer += part["text"];
    }
  }
  return { calls, text: answer };
}

/** The id of each call of a model message, made of the message's content (not its wire id). */
export function callIds(calls: readonly GeminiFunctionCall[], answerText: string): string[] {
  const content = canonicalJson([answerText, calls.map((each) => [each.name, each.args])]);
  return calls.map(
    (_call, ordinal) => `call_${sha256(`gemini-call:${ordinal}:${content}`).slice(0, 24)}`,
  );
}

/** The parts of a `Content` (its `parts` list; [] when it has none). */
export function partsOf(content: Json | undefined): readonly unknown[] {
  const parts = content?.["parts"];
  return Array.isArray(parts) ? parts : [];
}
