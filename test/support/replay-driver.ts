/**
 * Drives a conversation of several turns against a local provider server, the way the live
 * conversation does: render (with the running turn's signed material), send, parse the
 * stream, append the assistant message, run the tools, loop until the model stops calling
 * tools. The history is built only from what the server streamed back.
 */
import { sha256Hex } from "../../packages/library/src/core/hash.js";
import {
  toolResultFromBytes,
  type Block,
  type Message,
} from "../../packages/library/src/history/index.js";
import {
  renderRequest,
  streamRound,
  type AttachedSignedMaterial,
  type ProviderId,
  type RoundResult,
} from "../../packages/library/src/providers/index.js";
import type { ProviderServer, ScriptedRound } from "./provider-servers/index.js";
import { replayOptions } from "./replay-options.js";

export interface SentRequest {
  readonly body: string;
  /** The turn this request belongs to, and whether it is the turn's first request. */
  readonly turn: number;
  readonly firstOfTurn: boolean;
}

export class ReplayConversation {
  readonly history: Message[] = [];
  readonly images = new Map<string, Uint8Array>();
  readonly turnStarts: number[] = [];
  readonly sent: SentRequest[] = [];
  readonly rounds: RoundResult[] = [];
  signed: AttachedSignedMaterial[] = [];

  constructor(
    readonly provider: ProviderId,
    readonly server: ProviderServer,
  ) {}

  addImage(bytes: Uint8Array, mimeType = "image/png"): Block {
    const sha256 = sha256Hex(bytes);
    this.images.set(sha256, bytes);
    return { type: "image", sha256, mimeType };
  }

  /** Renders the next request of the current history (as the live conversation would). */
  render(previousMessageCount: number): string {
    return renderRequest(this.provider, {
      history: this.history,
      images: (sha256) => this.images.get(sha256),
      options: replayOptions(this.provider, previousMessageCount),
      signed: this.signed,
    }).body;
  }

  async send(body: string): Promise<RoundResult> {
    const model = replayOptions(this.provider, 0).model;
    const stream = streamRound(
      { provider: this.provider, model, body, stream: true },
      { apiKey: "test-key", baseUrl: this.server.baseUrl, maxRetries: 0 },
    );
    for (;;) {
      const next = await stream.next();
      if (next.done === true) return next.value;
    }
  }

  /**
   * One turn: the user message, then model rounds from `script` until one stops without tool
   * calls. `tools` answers each tool call with its output bytes (and optional image).
   */
  async turn(
    user: Message,
    script: readonly ScriptedRound[],
    tools: (
      name: string,
      args: string,
    ) => { bytes: Uint8Array; isError: boolean; image?: Uint8Array },
  ): Promise<void> {
    const turn = this.turnStarts.length;
    const previousMessageCount = this.history.length;
    this.turnStarts.push(this.history.length);
    this.signed = [];
    this.history.push(user);
    this.server.script.push(...script);
    let first = true;
    for (;;) {
      const body = this.render(previousMessageCount);
      this.sent.push({ body, turn, firstOfTurn: first });
      first = false;
      const result = await this.send(body);
      this.rounds.push(result);
      const messageIndex = this.history.length;
      this.history.push(result.message);
      const material = result.signed;
      if (
        material.leading.length +
          material.blockSignatures.length +
          material.trailing.length +
          material.reasoningDetails.length >
        0
      ) {
        this.signed.push({ messageIndex, material });
      }
      if (result.stopReason !== "tool_use") return;
      const results: Block[] = [];
      const followUp: Block[] = [];
      for (const block of result.message.content) {
        if (block.type !== "toolCall") continue;
        const output = tools(block.name, "arguments" in block ? block.arguments : "");
        results.push(toolResultFromBytes(block.id, block.name, output.isError, output.bytes));
        if (output.image !== undefined) {
          followUp.push(
            { type: "text", text: `The image returned by ${block.name}:` },
            this.addImage(output.image),
          );
        }
      }
      this.history.push({ role: "tool", content: results });
      if (followUp.length > 0) this.history.push({ role: "user", content: followUp });
    }
  }
}

/** Seeded bytes standing in for a PNG (the bytes only need to be kept exactly). */
export function fakePng(seed: number, length = 300): Uint8Array {
  const bytes = new Uint8Array(length);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let state = seed * 2654435761;
  for (let index = 8; index < length; index++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[index] = state >>> 24;
  }
  return bytes;
}

/**
 * The scripted conversation of the replay tests: 11 turns with tool calls (one and two at a
 * time, arguments with Japanese and irregular spacing), a tool error, non-UTF-8 tool output,
 * an image from the user and one returned by a tool, thinking in some rounds, emoji.
 */
export async function runScriptedConversation(conversation: ReplayConversation): Promise<void> {
  const tools = (name: string, args: string) => {
    if (name === "screenshot")
      return { bytes: new TextEncoder().encode("captured 📸"), isError: false, image: fakePng(99) };
    if (args.includes("missing"))
      return {
        bytes: new TextEncoder().encode("ENOENT: no such file 見つかりません"),
        isError: true,
      };
    if (args.includes("binary"))
      return { bytes: new Uint8Array([0xff, 0xfe, 0x00, 0x41, 0x80, 0xe3, 0x81]), isError: false };
    return { bytes: new TextEncoder().encode(`contents of ${args} — 内容 ✅`), isError: false };
  };
  for (let turn = 0; turn < 11; turn++) {
    const content: Block[] = [
      { type: "text", text: `Turn ${turn}: カードを作って 🎨 (${"x".repeat(turn)})` },
    ];
    if (turn === 0 || turn === 6) content.push(conversation.addImage(fakePng(turn)));
    const user: Message = { role: "user", content };
    const thinking = turn % 4 === 1 ? `考え中… step ${turn}` : undefined;
    const answer: ScriptedRound = {
      text: `Done with turn ${turn} ✅ 完了しました 👍`,
      usage: { input: 50 + turn, output: 9, cacheRead: 1000 * turn },
    };
    let script: ScriptedRound[];
    switch (turn % 5) {
      case 1:
        script = [
          {
            ...(thinking === undefined ? {} : { thinking }),
            text: "Let me read it.",
            toolCalls: [
              {
                id: `toolu_${turn}a`,
                name: "read_file",
                arguments: `{"path": "カード${turn}.txt",  "mode":"r"}`,
              },
            ],
          },
          answer,
        ];
        break;
      case 2:
        script = [
          {
            toolCalls: [
              {
                id: `toolu_${turn}a`,
                name: "read_file",
                arguments: `{"path":"missing-${turn}.txt"}`,
              },
              {
                id: `toolu_${turn}b`,
                name: "read_file",
                arguments: `{"path":"binary-${turn}.bin"}`,
              },
            ],
          },
          answer,
        ];
        break;
      case 3:
        script = [
          {
            text: "Capturing 📷",
            toolCalls: [{ id: `toolu_${turn}s`, name: "screenshot", arguments: "{}" }],
          },
          answer,
        ];
        break;
      default:
        script = [{ ...(thinking === undefined ? {} : { thinking }), ...answer }];
    }
    await conversation.turn(user, script, tools);
  }
}
