// A growing session in Gemini's `generateContent` format, for recording-overhead.ts's Gemini
// rows: the same turns as claude-session.ts's GrowingSession (each request the previous plus an
// answer with a text and a function call, and the function's response), written as Gemini CLI
// writes them: `contents` (`user` and `model` parts: text, functionCall, functionResponse), then
// `systemInstruction` and `tools` (functionDeclarations with parametersJsonSchema). Each message
// is converted once; a request is its converted contents joined, so it grows by appending.
import { GrowingSession, type GrowingSessionOptions } from "./claude-session.js";

interface AnthropicBlock {
  readonly type: string;
  readonly text?: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
  readonly tool_use_id?: string;
  readonly content?: unknown;
}

interface AnthropicBody {
  readonly messages: { readonly role: string; readonly content: AnthropicBlock[] }[];
  readonly system: { readonly text: string }[];
  readonly tools?: {
    readonly name: string;
    readonly description: string;
    readonly input_schema: unknown;
  }[];
}

export class GeminiSession {
  readonly #session: GrowingSession;
  /** The JSON of each converted message, by its Anthropic JSON (a rewind reuses them). */
  readonly #converted = new Map<string, string>();
  /** Tool call names by id (a functionResponse names its function). */
  readonly #names = new Map<string, string>();
  #tail: string | undefined;

  constructor(options: GrowingSessionOptions) {
    this.#session = new GrowingSession(options);
  }

  next(): Buffer {
    const body = JSON.parse(this.#session.next().toString("utf8")) as AnthropicBody;
    this.#tail ??=
      `],"systemInstruction":${JSON.stringify({ parts: body.system.map((part) => ({ text: part.text })) })}` +
      (body.tools === undefined
        ? ""
        : `,"tools":${JSON.stringify([
            {
              functionDeclarations: body.tools.map((tool) => ({
                name: tool.name,
                description: tool.description,
                parametersJsonSchema: tool.input_schema,
              })),
            },
          ])}`) +
      `,"generationConfig":{"temperature":0,"topP":1,"thinkingConfig":{"includeThoughts":true}}}`;
    const contents = body.messages.map((message) => this.#content(message));
    return Buffer.from(`{"contents":[${contents.join(",")}${this.#tail}`, "utf8");
  }

  #content(message: AnthropicBody["messages"][number]): string {
    // The cache marker moves to the newest message: not part of the converted content.
    const key = JSON.stringify({
      ...message,
      content: message.content.map(
        ({ cache_control: _, ...block }: AnthropicBlock & { cache_control?: unknown }) => block,
      ),
    });
    const known = this.#converted.get(key);
    if (known !== undefined) return known;
    const parts = message.content.map((block) => {
      if (block.type === "tool_use") {
        this.#names.set(block.id ?? "", block.name ?? "");
        return { functionCall: { name: block.name, args: block.input } };
      }
      if (block.type === "tool_result") {
        return {
          functionResponse: {
            name: this.#names.get(block.tool_use_id ?? "") ?? "",
            response: { output: block.content },
          },
        };
      }
      return { text: block.text ?? "" };
    });
    const json = JSON.stringify({ role: message.role === "assistant" ? "model" : "user", parts });
    this.#converted.set(key, json);
    return json;
  }
}
