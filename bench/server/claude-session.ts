// A Claude-Code-shaped agent session, deterministic (a seeded PRNG, never Math.random), for
// bench/server/recording-storage.ts: the request bodies Claude Code sends to POST /v1/messages
// (`model`, `messages`, `system` as text blocks with `cache_control`, ~30 KB of `tools` with
// JSON schemas, `metadata.user_id`, `max_tokens`, `stream: true`), the answers an Anthropic
// upstream streams back (server-sent events), and a local stub upstream that streams them.
//
// Call n (1-based) sends 2n − 1 messages: the task prompt, then for each earlier call its
// answer (an assistant message: a text block and one tool_use block, as the client read it
// from the stream) and a user message with the tool_result (500 B – 6 KB of file contents,
// command output, search results; on the screenshot calls a text block and a ~60 KB base64 PNG
// image, the same bytes each time). Claude Code's `cache_control: {type: "ephemeral"}` marker
// sits on the last content block of the last user message, so it moves every call.
import { createServer, type Server } from "node:http";
import { crc32 } from "node:zlib";
import { seededRandom } from "../workload/conversation.js";

/** A PRNG (mulberry32) of a 32-bit seed: numbers in [0, 1). */
export const prng = seededRandom;

/** A seed mixed from several whole numbers (each call and purpose gets a stream of its own). */
function mix(...parts: number[]): number {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    hash = Math.imul(hash ^ (part >>> 0), 0x01000193);
    hash ^= hash >>> 13;
    hash = Math.imul(hash, 0x5bd1e995);
    hash ^= hash >>> 15;
  }
  return hash >>> 0;
}

type Random = () => number;
const pick = <T>(random: Random, list: readonly T[]): T =>
  list[Math.floor(random() * list.length)] as T;
const between = (random: Random, low: number, high: number): number =>
  low + Math.floor(random() * (high - low + 1));

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
function token(random: Random, length: number): string {
  let out = "";
  for (let index = 0; index < length; index++) out += pick(random, [...ALPHANUMERIC]);
  return out;
}

const WORDS = (
  "the a an of to in for on with by from as at is are be was it this that these those when " +
  "if then else not only each every any all some before after file files path tool tools " +
  "call calls command commands output input result results user users agent model request " +
  "response message messages session sessions server client store database table row rows " +
  "index query schema type types function module test tests build error errors warning line " +
  "lines change changes edit read write search pattern directory project repository branch " +
  "commit status code value values field fields option options default config current new " +
  "old previous next first last use uses used run runs running check checks return returns " +
  "should must may can will always never instead unless until while because so which what " +
  "where how whether parameter parameters absolute relative content contents JSON text " +
  "string number boolean array object list specific relevant important exactly whole"
).split(" ");
const IDENTIFIERS = (
  "request response body bytes store row call session message chain node prefix hash " +
  "conversation subject key token cursor page limit offset buffer chunk stream event reply " +
  "upstream client server database schema table column index query result error options " +
  "config path headers status model usage cache entry record recorder placing image block"
).split(" ");
const TYPES = "string number boolean Buffer unknown Record<string, unknown> Promise<void>".split(
  " ",
);
const DIRECTORIES = [
  "packages/server/src/gateway/recording",
  "packages/server/src/store/repositories",
  "packages/server/src/server/routes",
  "packages/server/src/server/console",
  "packages/library/src/format",
  "packages/library/src/history",
  "test/server",
  "web/src/views",
];

function sentence(random: Random, low = 8, high = 22): string {
  const words = Array.from({ length: between(random, low, high) }, () => pick(random, WORDS));
  const text = words.join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function prose(random: Random, sentences: number): string {
  return Array.from({ length: sentences }, () => sentence(random)).join(" ");
}

function identifier(random: Random): string {
  const first = pick(random, IDENTIFIERS);
  const second = pick(random, IDENTIFIERS);
  return `${first}${second.charAt(0).toUpperCase()}${second.slice(1)}`;
}

function typeName(random: Random): string {
  const name = identifier(random);
  return `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
}

function filePath(random: Random): string {
  return `/home/dev/verbatim/${pick(random, DIRECTORIES)}/${pick(random, IDENTIFIERS)}-${pick(random, IDENTIFIERS)}.ts`;
}

function codeLine(random: Random): string {
  const a = identifier(random);
  const b = identifier(random);
  switch (between(random, 0, 11)) {
    case 0:
      return `import { ${typeName(random)}, ${identifier(random)} } from "../${pick(random, IDENTIFIERS)}/${pick(random, IDENTIFIERS)}.js";`;
    case 1:
      return `export async function ${a}(${b}: ${typeName(random)}, options: ${typeName(random)} = {}): Promise<${pick(random, TYPES)}> {`;
    case 2:
      return `  const ${a} = await ${b}.${identifier(random)}(${identifier(random)}, "${pick(random, WORDS)}");`;
    case 3:
      return `  if (${a} === undefined || ${a}.length > ${between(random, 2, 9999)}) return ${b};`;
    case 4:
      return `  // ${sentence(random, 6, 16)}`;
    case 5:
      return `    ${a}: ${pick(random, TYPES)};`;
    case 6:
      return `  for (const ${pick(random, IDENTIFIERS)} of ${a}) ${b}.push(${identifier(random)});`;
    case 7:
      return "  }";
    case 8:
      return "}";
    case 9:
      return "";
    case 10:
      return `    throw new Error(\`${sentence(random, 4, 9)} \${${a}}\`);`;
    default:
      return `  return { ${a}, ${b}: ${identifier(random)}.${identifier(random)} };`;
  }
}

/** `length` bytes (about) of whole lines from `line`, the last cut at a line's end. */
function linesUpTo(length: number, line: (index: number) => string): string {
  const lines: string[] = [];
  let size = 0;
  for (let index = 0; size < length; index++) {
    const text = line(index);
    lines.push(text);
    size += text.length + 1;
  }
  return lines.join("\n");
}

/** A PNG-like image: the PNG signature, an IHDR chunk, ~45 KB of random IDAT bytes, IEND. */
function screenshotPng(seed: number): Buffer {
  const random = prng(mix(seed, 77));
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, "latin1");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1280, 0);
  header.writeUInt32BE(800, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const pixels = Buffer.alloc(45_000);
  for (let index = 0; index < pixels.length; index++) pixels[index] = Math.floor(random() * 256);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", pixels),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

interface ToolSpec {
  readonly name: string;
  readonly parameters: readonly [name: string, type: string, required: boolean][];
  readonly sentences: number;
}

const TOOL_SPECS: readonly ToolSpec[] = [
  {
    name: "Task",
    parameters: [
      ["description", "string", true],
      ["prompt", "string", true],
      ["subagent_type", "string", true],
    ],
    sentences: 30,
  },
  {
    name: "Bash",
    parameters: [
      ["command", "string", true],
      ["timeout", "number", false],
      ["description", "string", false],
      ["run_in_background", "boolean", false],
    ],
    sentences: 45,
  },
  {
    name: "Glob",
    parameters: [
      ["pattern", "string", true],
      ["path", "string", false],
    ],
    sentences: 6,
  },
  {
    name: "Grep",
    parameters: [
      ["pattern", "string", true],
      ["path", "string", false],
      ["glob", "string", false],
      ["output_mode", "string", false],
      ["-B", "number", false],
      ["-A", "number", false],
      ["-C", "number", false],
      ["-n", "boolean", false],
      ["-i", "boolean", false],
      ["type", "string", false],
      ["head_limit", "number", false],
      ["multiline", "boolean", false],
    ],
    sentences: 14,
  },
  {
    name: "ExitPlanMode",
    parameters: [["plan", "string", true]],
    sentences: 8,
  },
  {
    name: "Read",
    parameters: [
      ["file_path", "string", true],
      ["offset", "number", false],
      ["limit", "number", false],
    ],
    sentences: 14,
  },
  {
    name: "Edit",
    parameters: [
      ["file_path", "string", true],
      ["old_string", "string", true],
      ["new_string", "string", true],
      ["replace_all", "boolean", false],
    ],
    sentences: 10,
  },
  {
    name: "Write",
    parameters: [
      ["file_path", "string", true],
      ["content", "string", true],
    ],
    sentences: 7,
  },
  {
    name: "NotebookEdit",
    parameters: [
      ["notebook_path", "string", true],
      ["cell_id", "string", false],
      ["new_source", "string", true],
      ["cell_type", "string", false],
      ["edit_mode", "string", false],
    ],
    sentences: 5,
  },
  {
    name: "WebFetch",
    parameters: [
      ["url", "string", true],
      ["prompt", "string", true],
    ],
    sentences: 12,
  },
  {
    name: "TodoWrite",
    parameters: [["todos", "array", true]],
    sentences: 40,
  },
  {
    name: "WebSearch",
    parameters: [
      ["query", "string", true],
      ["allowed_domains", "array", false],
      ["blocked_domains", "array", false],
    ],
    sentences: 7,
  },
  {
    name: "BashOutput",
    parameters: [
      ["bash_id", "string", true],
      ["filter", "string", false],
    ],
    sentences: 4,
  },
  {
    name: "KillShell",
    parameters: [["shell_id", "string", true]],
    sentences: 3,
  },
  {
    name: "SlashCommand",
    parameters: [["command", "string", true]],
    sentences: 9,
  },
  {
    name: "mcp__playwright__browser_navigate",
    parameters: [["url", "string", true]],
    sentences: 2,
  },
  {
    name: "mcp__playwright__browser_take_screenshot",
    parameters: [
      ["type", "string", false],
      ["filename", "string", false],
      ["element", "string", false],
      ["ref", "string", false],
      ["fullPage", "boolean", false],
    ],
    sentences: 3,
  },
  {
    name: "mcp__playwright__browser_click",
    parameters: [
      ["element", "string", true],
      ["ref", "string", true],
      ["doubleClick", "boolean", false],
      ["button", "string", false],
    ],
    sentences: 2,
  },
  {
    name: "mcp__playwright__browser_snapshot",
    parameters: [],
    sentences: 2,
  },
];

/** The tool definitions: descriptions of generated prose, JSON schemas as Claude Code sends them. */
function toolDefinitions(seed: number): unknown[] {
  return TOOL_SPECS.map((spec, index) => {
    const random = prng(mix(seed, 11, index));
    const properties: Record<string, unknown> = {};
    for (const [name, type] of spec.parameters) {
      const description = sentence(random, 6, 24);
      properties[name] =
        type === "array"
          ? {
              type: "array",
              items:
                spec.name === "TodoWrite"
                  ? {
                      type: "object",
                      properties: {
                        content: { type: "string", minLength: 1 },
                        status: { type: "string", enum: ["pending", "in_progress", "completed"] },
                        activeForm: { type: "string", minLength: 1 },
                      },
                      required: ["content", "status", "activeForm"],
                      additionalProperties: false,
                    }
                  : { type: "string" },
              description,
            }
          : { type, description };
    }
    const paragraphs = Array.from({ length: Math.ceil(spec.sentences / 7) }, () =>
      prose(random, 5),
    );
    const usage = Array.from(
      { length: Math.ceil(spec.sentences / 6) },
      () => `- ${sentence(random)}`,
    );
    return {
      name: spec.name,
      description: `${paragraphs.join("\n\n")}\n\nUsage notes:\n${usage.join("\n")}`,
      input_schema: {
        type: "object",
        properties,
        required: spec.parameters.filter(([, , required]) => required).map(([name]) => name),
        additionalProperties: false,
        $schema: "http://json-schema.org/draft-07/schema#",
      },
    };
  });
}

function systemPrompt(seed: number): unknown[] {
  const random = prng(mix(seed, 13));
  const sections = [
    "Tone and style",
    "Proactiveness",
    "Following conventions",
    "Code style",
    "Task Management",
    "Doing tasks",
    "Tool usage policy",
  ].map((title) => `# ${title}\n${prose(random, 8)}\n- ${sentence(random)}\n- ${sentence(random)}`);
  const environment =
    "Here is useful information about the environment you are running in:\n<env>\n" +
    "Working directory: /home/dev/verbatim\nIs directory a git repo: Yes\nPlatform: linux\n" +
    "OS Version: Linux 6.1.0-18-amd64\nToday's date: 2025-10-02\n</env>\n" +
    "You are powered by the model named Sonnet 4.5. The exact model ID is claude-sonnet-4-5-20250929.";
  return [
    {
      type: "text",
      text: "You are Claude Code, Anthropic's official CLI for Claude.",
      cache_control: { type: "ephemeral" },
    },
    {
      type: "text",
      text: `${prose(random, 4)}\n\n${sections.join("\n\n")}\n\n${environment}\n\n${prose(random, 20)}`,
      cache_control: { type: "ephemeral" },
    },
  ];
}

/** One content block of an answer. */
export type AnswerBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** An assistant message as the client sends it back. */
export interface AssistantMessage {
  role: "assistant";
  content: AnswerBlock[];
}

const CACHE_CONTROL = { type: "ephemeral" } as const;

export class ClaudeSession {
  readonly seed: number;
  readonly model = "claude-sonnet-4-5-20250929";
  readonly system: unknown[];
  readonly tools: unknown[];
  readonly metadata: { user_id: string };
  /** The screenshot's base64 text, the same in every call that carries it. */
  readonly image: string;
  readonly systemJson: string;
  readonly toolsJson: string;

  constructor(seed: number) {
    this.seed = seed;
    this.system = systemPrompt(seed);
    this.tools = toolDefinitions(seed);
    this.systemJson = JSON.stringify(this.system);
    this.toolsJson = JSON.stringify(this.tools);
    const random = prng(mix(seed, 17));
    const hex = Array.from({ length: 64 }, () => "0123456789abcdef"[between(random, 0, 15)]).join(
      "",
    );
    const uuid = [8, 4, 4, 4, 12]
      .map((length) =>
        Array.from({ length }, () => "0123456789abcdef"[between(random, 0, 15)]).join(""),
      )
      .join("-");
    this.metadata = { user_id: `user_${hex}_account__session_${uuid}` };
    this.image = screenshotPng(seed).toString("base64");
  }

  /** Whether call `call`'s request carries the screenshot (in its last tool_result): 5, 30, 60, 90, … */
  screenshotCall(call: number): boolean {
    return call === 5 || (call >= 30 && call % 30 === 0);
  }

  /** The first user message: Claude Code's context reminder and the task. */
  firstMessage(): { role: "user"; content: unknown[] } {
    const random = prng(mix(this.seed, 19));
    const claudeMd = Array.from({ length: 12 }, () => `- ${sentence(random)}`).join("\n");
    return {
      role: "user",
      content: [
        {
          type: "text",
          text:
            "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n" +
            `# claudeMd\nContents of /home/dev/verbatim/CLAUDE.md (project instructions, checked into the codebase):\n\n${claudeMd}\n\n` +
            "IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>\n",
        },
        {
          type: "text",
          text: `The recorded calls tests fail after the last change. ${prose(random, 3)} Find the cause, fix it and run the tests.`,
        },
      ],
    };
  }

  /** The answer of call `call`: a text block and one tool_use block. */
  answer(call: number): AssistantMessage {
    const random = prng(mix(this.seed, 23, call));
    const text = prose(random, between(random, 1, 3));
    const id = `toolu_01${token(random, 22)}`;
    let name: string;
    let input: Record<string, unknown>;
    if (this.screenshotCall(call + 1)) {
      name = "mcp__playwright__browser_take_screenshot";
      input = { filename: `console-${call}.png`, fullPage: false };
    } else {
      const kind = pick(random, ["Read", "Read", "Read", "Bash", "Bash", "Grep", "Glob", "Edit"]);
      name = kind;
      if (kind === "Read") input = { file_path: filePath(random) };
      else if (kind === "Bash") {
        input = {
          command: pick(random, [
            "npx vitest run test/server/record-chains.test.ts",
            "git status && git diff --stat",
            "npx tsc -p . --noEmit",
            "ls -la packages/server/src/gateway/recording",
            "git log --oneline -20",
          ]),
          description: sentence(random, 3, 7),
        };
      } else if (kind === "Grep") {
        input = {
          pattern: identifier(random),
          path: "packages",
          output_mode: "content",
          "-n": true,
        };
      } else if (kind === "Glob") {
        input = { pattern: `packages/**/${pick(random, IDENTIFIERS)}*.ts` };
      } else {
        const before = Array.from({ length: between(random, 2, 6) }, () => codeLine(random));
        const after = [...before];
        after[Math.floor(random() * after.length)] = codeLine(random);
        input = {
          file_path: filePath(random),
          old_string: before.join("\n"),
          new_string: after.join("\n"),
        };
      }
    }
    return {
      role: "assistant",
      content: [
        { type: "text", text },
        { type: "tool_use", id, name, input },
      ],
    };
  }

  /** The user message with the tool_result of `answer` (call `call`'s answer), no marker. */
  toolResult(call: number, answer: AssistantMessage): { role: "user"; content: unknown[] } {
    const random = prng(mix(this.seed, 29, call));
    const use = answer.content.find((block) => block.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error(`call ${call}: the answer has no tool_use`);
    if (this.screenshotCall(call + 1)) {
      return {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: use.id,
            content: [
              {
                type: "text",
                text: `Took the viewport screenshot and saved it as /tmp/playwright-mcp-output/${String(use.input["filename"])}`,
              },
              {
                type: "image",
                source: { type: "base64", media_type: "image/png", data: this.image },
              },
            ],
          },
        ],
      };
    }
    const size = between(random, 500, 6000);
    let content: string;
    switch (use.name) {
      case "Read":
        content = linesUpTo(
          size,
          (index) => `${String(index + 1).padStart(6)}→${codeLine(random)}`,
        );
        break;
      case "Bash":
        content = linesUpTo(size, () =>
          pick(random, [
            () =>
              ` ✓ test/server/${pick(random, IDENTIFIERS)}-${pick(random, IDENTIFIERS)}.test.ts (${between(random, 1, 60)} tests) ${between(random, 3, 2500)}ms`,
            () =>
              ` × ${sentence(random, 4, 10)} ${between(random, 2, 90)}ms\n   → expected ${between(random, 0, 99)} to be ${between(random, 0, 99)} // Object.is equality`,
            () => `${token(random, 7).toLowerCase()} ${sentence(random, 3, 9)}`,
            () => `	modified:   ${filePath(random).slice(19)}`,
            () =>
              `${filePath(random).slice(19)}(${between(random, 1, 400)},${between(random, 1, 80)}): error TS2345: ${sentence(random, 5, 12)}`,
          ])(),
        );
        break;
      case "Grep":
        content = linesUpTo(
          size,
          () => `${filePath(random).slice(19)}:${between(random, 1, 900)}:${codeLine(random)}`,
        );
        break;
      case "Glob":
        content = linesUpTo(size, () => filePath(random));
        break;
      default:
        content =
          `The file ${String(use.input["file_path"])} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
          linesUpTo(size, (index) => `${String(index + 40).padStart(6)}→${codeLine(random)}`);
    }
    return {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: use.id, content }],
    };
  }
}

/** `message` with Claude Code's cache marker on its last content block (a copy). */
export function withCacheMarker(message: { role: string; content: unknown[] }): unknown {
  const content = [...message.content];
  const last = content.length - 1;
  content[last] = { ...(content[last] as object), cache_control: CACHE_CONTROL };
  return { ...message, content };
}

/** The server-sent events of `answer` as Anthropic streams them (text in chunks of a few words). */
export function answerStream(
  seed: number,
  call: number,
  model: string,
  answer: AssistantMessage,
  usage: { input: number; cacheRead: number; cacheWrite: number },
): string {
  const random = prng(mix(seed, 31, call));
  const events: [string, unknown][] = [];
  const outputTokens = Math.ceil(JSON.stringify(answer.content).length / 4);
  events.push([
    "message_start",
    {
      type: "message_start",
      message: {
        model,
        id: `msg_01${token(random, 22)}`,
        type: "message",
        role: "assistant",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          cache_creation_input_tokens: usage.cacheWrite,
          cache_read_input_tokens: usage.cacheRead,
          cache_creation: {
            ephemeral_5m_input_tokens: usage.cacheWrite,
            ephemeral_1h_input_tokens: 0,
          },
          output_tokens: 1,
          service_tier: "standard",
        },
      },
    },
  ]);
  answer.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      ]);
      if (index === 0) events.push(["ping", { type: "ping" }]);
      const words = block.text.match(/\S+\s*/g) ?? [block.text];
      for (let at = 0; at < words.length;) {
        const take = between(random, 1, 4);
        events.push([
          "content_block_delta",
          {
            type: "content_block_delta",
            index,
            delta: { type: "text_delta", text: words.slice(at, at + take).join("") },
          },
        ]);
        at += take;
      }
    } else {
      events.push([
        "content_block_start",
        {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        },
      ]);
      events.push([
        "content_block_delta",
        {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: "" },
        },
      ]);
      const json = JSON.stringify(block.input);
      for (let at = 0; at < json.length;) {
        const take = between(random, 8, 40);
        events.push([
          "content_block_delta",
          {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: json.slice(at, at + take) },
          },
        ]);
        at += take;
      }
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: {
        input_tokens: usage.input,
        cache_creation_input_tokens: usage.cacheWrite,
        cache_read_input_tokens: usage.cacheRead,
        output_tokens: outputTokens,
      },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events
    .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
}

/** The assistant message a client reads from an Anthropic stream (text and tool_use blocks). */
export function readAnswerStream(text: string): AssistantMessage {
  const blocks: AnswerBlock[] = [];
  const partial = new Map<number, string>();
  for (const event of text.split("\n\n")) {
    const line = event.split("\n").find((part) => part.startsWith("data: "));
    if (line === undefined) continue;
    const data = JSON.parse(line.slice(6)) as Record<string, unknown>;
    const index = data["index"] as number;
    if (data["type"] === "content_block_start") {
      const block = data["content_block"] as AnswerBlock;
      blocks[index] = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
      if (block.type === "tool_use") partial.set(index, "");
    } else if (data["type"] === "content_block_delta") {
      const delta = data["delta"] as { type: string; text?: string; partial_json?: string };
      const block = blocks[index];
      if (delta.type === "text_delta" && block?.type === "text") block.text += delta.text ?? "";
      if (delta.type === "input_json_delta") {
        partial.set(index, (partial.get(index) ?? "") + (delta.partial_json ?? ""));
      }
    } else if (data["type"] === "content_block_stop") {
      const block = blocks[index];
      const json = partial.get(index);
      if (block?.type === "tool_use" && json !== undefined && json !== "") {
        block.input = JSON.parse(json) as Record<string, unknown>;
      }
    }
  }
  return { role: "assistant", content: blocks };
}

/**
 * A local upstream that answers POST /v1/messages like Anthropic's streaming API with the
 * session's answer of the call (2n − 1 messages: call n); the usage reports the request's
 * tokens (its bytes / 4) as a cache read up to the previous turn and a cache write of the rest.
 */
export async function startClaudeUpstream(
  session: ClaudeSession,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const bytes = Buffer.concat(chunks);
      const body = JSON.parse(bytes.toString("utf8")) as { messages: unknown[]; model: string };
      const call = (body.messages.length + 1) / 2;
      const tokens = Math.ceil(bytes.length / 4);
      const lastTurn = Math.ceil(JSON.stringify(body.messages.slice(-2)).length / 4);
      const cacheRead = call === 1 ? 0 : tokens - lastTurn;
      response.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "request-id": `req_011C${token(prng(mix(session.seed, 37, call)), 18)}`,
        "anthropic-organization-id": "00000000-0000-4000-8000-000000000000",
      });
      response.end(
        answerStream(session.seed, call, body.model, session.answer(call), {
          input: 4,
          cacheRead,
          cacheWrite: tokens - cacheRead - 4,
        }),
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** About `bytes` of whole sentences. */
function proseUpTo(random: Random, bytes: number): string {
  let text = sentence(random);
  while (text.length < bytes) text += ` ${sentence(random)}`;
  return text;
}

export interface GrowingSessionOptions {
  readonly seed: number;
  /** The `system` field's JSON text, sent with every call. */
  readonly systemJson: string;
  /** The `tools` field's JSON text, sent with every call (none when absent). */
  readonly toolsJson?: string;
  /** About what each call adds: half the answer sent back, half the next user message. */
  readonly turnBytes: number;
  /** The first request already this long (its history filled with turns); default: one message. */
  readonly from?: number;
  /**
   * Once a request would be longer, the history goes back to its length at `from` and goes on
   * with other turns (the session rewound: the next request shares everything up to there with
   * the earlier ones); default never.
   */
  readonly to?: number;
}

/**
 * A session whose every request is the previous one plus a turn (the answer as the client
 * sends it back, and the next user message with a tool's output), in Claude Code's order:
 * `model`, `messages` (the cache marker on the last user message's last block, so it moves every
 * call), `system`, `tools`, `metadata`, `max_tokens`; not streamed, any JSON answer does. For
 * measuring what recording a call costs as a session grows (bench/server/recording-overhead.ts):
 * the store diffs each request against the previous one as in real use.
 */
export class GrowingSession {
  readonly #options: GrowingSessionOptions;
  readonly #head: string;
  readonly #tail: string;
  /** Each message's JSON text without the cache marker, and its value. */
  readonly #history: { json: string; value: { role: string; content: unknown[] } }[] = [];
  /** The history's JSON bytes, commas between messages included. */
  #bytes = 0;
  /** Messages of the history when it first reached `from`: where a rewind goes back to. */
  #rewindTo = 1;
  #generation = 0;
  #turns = 0;
  #calls = 0;

  constructor(options: GrowingSessionOptions) {
    this.#options = options;
    const model = "claude-sonnet-4-5-20250929";
    const random = prng(mix(options.seed, 43));
    this.#head = `{"model":${JSON.stringify(model)},"messages":[`;
    this.#tail =
      `],"system":${options.systemJson}` +
      (options.toolsJson === undefined ? "" : `,"tools":${options.toolsJson}`) +
      `,"metadata":${JSON.stringify({ user_id: `user_${token(random, 40)}` })},"max_tokens":32000}`;
    this.#push({
      role: "user",
      content: [{ type: "text", text: proseUpTo(random, Math.max(40, options.turnBytes / 2)) }],
    });
    while (this.#length() < (options.from ?? 0)) this.#turn();
    this.#rewindTo = this.#history.length;
  }

  /** Calls made so far. */
  get calls(): number {
    return this.#calls;
  }

  /** The next call's request body: the previous one plus a turn (the first: as constructed). */
  next(): Buffer {
    if (this.#calls > 0) {
      this.#turn();
      if (this.#options.to !== undefined && this.#length() > this.#options.to) {
        const dropped = this.#history.splice(this.#rewindTo);
        for (const message of dropped) this.#bytes -= Buffer.byteLength(message.json) + 1;
        this.#generation++;
        this.#turn();
      }
    }
    this.#calls++;
    const last = this.#history.length - 1;
    const parts = this.#history.map((message, index) =>
      index === last ? JSON.stringify(withCacheMarker(message.value)) : message.json,
    );
    return Buffer.from(this.#head + parts.join(",") + this.#tail, "utf8");
  }

  /** About the next request's length (the cache marker not counted). */
  #length(): number {
    return this.#head.length + this.#bytes + this.#tail.length;
  }

  #push(value: { role: string; content: unknown[] }): void {
    const json = JSON.stringify(value);
    this.#history.push({ json, value });
    this.#bytes += Buffer.byteLength(json) + (this.#history.length > 1 ? 1 : 0);
  }

  /**
   * An answer (text and a Read tool_use) and the user message with the tool's output: about
   * `turnBytes` of JSON (each message's envelope is ~230 B and ~110 B, its text the rest).
   */
  #turn(): void {
    const turn = this.#turns++;
    const random = prng(mix(this.#options.seed, 47, this.#generation, turn));
    const half = this.#options.turnBytes / 2;
    const id = `toolu_01${token(random, 22)}`;
    const path = filePath(random);
    const input = { file_path: path };
    const textBytes = Math.max(20, half - 230);
    const text = proseUpTo(random, textBytes).slice(0, textBytes);
    this.#push({
      role: "assistant",
      content: [
        { type: "text", text },
        { type: "tool_use", id, name: "Read", input },
      ],
    });
    const output = linesUpTo(
      half,
      (index) => `${String(index + 1).padStart(6)}→${codeLine(random)}`,
    ).slice(0, Math.max(20, half - 130));
    this.#push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content: output }],
    });
  }
}
