/**
 * `verbatim render` and `verbatim cache-diff` (docs/cli.md), in process and as a child process.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openArchive } from "../../packages/library/src/archive/index.js";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { INTERRUPTED_TOOL_RESULT } from "../../packages/library/src/cli/commands/render.js";
import { main } from "../../packages/library/src/cli/main.js";
import { sha256Hex } from "../../packages/library/src/core/hash.js";
import { emptyConversation } from "../../packages/library/src/format/index.js";
import type { Message } from "../../packages/library/src/history/index.js";
import { renderRequest } from "../../packages/library/src/providers/index.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
const SHA = sha256Hex(PNG);
const history: Message[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "Make a card 🃏" },
      { type: "image", sha256: SHA, mimeType: "image/png" },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "toolCall", id: "toolu_1", name: "batch_design", arguments: '{"operations":"[]"}' },
    ],
  },
  {
    role: "tool",
    content: [
      {
        type: "toolResult",
        callID: "toolu_1",
        toolName: "batch_design",
        isError: false,
        content: '{"created":[]}',
      },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "Made a card." }] },
];

let folder: string;
let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "verbatim-render-cli-"));
  folder = join(work, "Poster.package");
  await mkdir(folder);
  const opened = await openArchive(folder);
  await opened.archive.save(
    {
      ...emptyConversation(),
      provider: "anthropic",
      model: "claude-opus-5-5",
      history,
      sentFacts: [{ message: 0 }],
    },
    new Map([[SHA, PNG]]),
  );
  await writeFile(join(work, "system.txt"), "You design cards.");
  await writeFile(
    join(work, "tools.json"),
    JSON.stringify([
      { name: "batch_design", description: "Apply operations", inputSchema: { type: "object" } },
    ]),
  );
});
afterAll(async () => rm(work, { recursive: true, force: true }));

async function run(argv: string[]) {
  const io = bufferIO({ cwd: work });
  const code = await main(argv, io);
  return { code, out: io.out().toString("utf8"), err: io.err() };
}

describe("verbatim render", () => {
  it("A26 writes the exact body of the next request: saved history plus the message", async () => {
    const result = await run([
      "render",
      "Poster.package",
      "--provider",
      "anthropic",
      "--system",
      "system.txt",
      "--tools",
      "tools.json",
      "--message",
      "Next ✨",
    ]);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    const expected = renderRequest("anthropic", {
      history: [...history, { role: "user", content: [{ type: "text", text: "Next ✨" }] }],
      images: (sha) => (sha === SHA ? PNG : undefined),
      options: {
        model: "claude-opus-5-5",
        maxTokens: 8192,
        system: "You design cards.",
        tools: [
          {
            name: "batch_design",
            description: "Apply operations",
            inputSchema: { type: "object" },
          },
        ],
        cache: { previousMessageCount: 3 },
      },
    }).body;
    expect(result.out).toBe(expected);
  });

  it("A24 renders the same saved history for every provider, --model overriding the saved one", async () => {
    for (const provider of ["openai-chat", "openai-responses", "gemini", "openrouter"]) {
      const result = await run([
        "render",
        "Poster.package",
        "--provider",
        provider,
        "--model",
        "other-model",
      ]);
      expect(result.code).toBe(0);
      expect(result.out).toContain("Made a card.");
      expect(result.out).toContain("toolu_1");
      if (provider !== "gemini") expect(result.out).toContain('"model":"other-model"');
    }
  });

  it("render --message after an unanswered tool call adds a marked interrupted result before the text (Anthropic refuses text right after tool_use)", async () => {
    // The last lines of a real Codex rollout that stopped while its tool ran
    // (test/fixtures/interop/SOURCES.md): a function_call with no output.
    const rollout = await readFile(
      new URL(
        "../fixtures/interop/codex/0.104-sanitized/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
        import.meta.url,
      ),
      "utf8",
    );
    const call = rollout
      .split("\n")
      .filter((line) => line.includes('"function_call"'))
      .map((line) => (JSON.parse(line) as { payload: Record<string, string> }).payload)
      .at(-1);
    const interrupted = join(work, "Interrupted.package");
    await mkdir(interrupted);
    const opened = await openArchive(interrupted);
    const saved: Message[] = [
      { role: "user", content: [{ type: "text", text: "List the files" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Listing." },
          {
            type: "toolCall",
            id: call?.["call_id"] ?? "",
            name: call?.["name"] ?? "",
            arguments: call?.["arguments"] ?? "",
          },
        ],
      },
    ];
    await opened.archive.save(
      { ...emptyConversation(), provider: "anthropic", model: "claude-opus-5-5", history: saved },
      new Map(),
    );
    const result = await run([
      "render",
      "Interrupted.package",
      "--provider",
      "anthropic",
      "--message",
      "Go on",
    ]);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.out) as { messages: { role: string; content: unknown[] }[] };
    const last = body.messages.at(-1);
    expect(last?.role).toBe("user");
    expect(last?.content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "call_UtYwHmwWekzvq83m8Rb9K8jJ",
        content: INTERRUPTED_TOOL_RESULT,
        is_error: true,
      },
      { type: "text", text: "Go on", cache_control: { type: "ephemeral" } },
    ]);
    expect(result.err).toContain(
      "verbatim render: note: the tool call call_UtYwHmwWekzvq83m8Rb9K8jJ (exec_command) has no saved result",
    );
    // A call already answered gets nothing added.
    const answered = await run([
      "render",
      "Poster.package",
      "--provider",
      "anthropic",
      "--message",
      "Hi",
    ]);
    expect(answered.out).not.toContain(INTERRUPTED_TOOL_RESULT);
  });

  it("render --tools takes a Responses custom tool (kind custom): its calls render as custom_tool_call", async () => {
    await writeFile(
      join(work, "custom-tools.json"),
      JSON.stringify([
        {
          name: "batch_design",
          description: "Apply operations",
          inputSchema: {},
          kind: "custom",
          format: { type: "text" },
        },
      ]),
    );
    const result = await run([
      "render",
      "Poster.package",
      "--provider",
      "openai-responses",
      "--tools",
      "custom-tools.json",
    ]);
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      '{"type":"custom_tool_call","call_id":"toolu_1","name":"batch_design","input":"{\\"operations\\":\\"[]\\"}"}',
    );
    expect(result.out).toContain('{"type":"custom_tool_call_output","call_id":"toolu_1"');
    expect(result.out).toContain(
      '"tools":[{"type":"custom","name":"batch_design","description":"Apply operations","format":{"type":"text"}}]',
    );
  });

  it("exit 2 for usage errors and a missing package", async () => {
    expect((await run(["render", "Poster.package"])).code).toBe(2);
    expect((await run(["render", "Poster.package", "--provider", "nope"])).code).toBe(2);
    expect((await run(["render", "missing.package", "--provider", "anthropic"])).code).toBe(2);
    expect(
      (await run(["render", "Poster.package", "--provider", "anthropic", "--tools", "absent.json"]))
        .code,
    ).toBe(2);
  });

  it("A26 runs as a child process: node bin/verbatim.js render", async () => {
    const child = await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, "bin/verbatim.js"),
        "render",
        join(folder),
        "--provider",
        "openai-chat",
        "--message",
        "hi",
      ],
      {
        cwd: work,
      },
    );
    expect(child.stdout.startsWith('{"model":"claude-opus-5-5","messages":[')).toBe(true);
    expect(child.stdout.endsWith('"stream":true,"stream_options":{"include_usage":true}}')).toBe(
      true,
    );
  });
});

describe("verbatim cache-diff", () => {
  async function bodies(after: Message[]) {
    const options = { model: "m", maxTokens: 10 };
    await writeFile(
      join(work, "before.json"),
      renderRequest("anthropic", { history, images: () => PNG, options }).body,
    );
    await writeFile(
      join(work, "after.json"),
      renderRequest("anthropic", { history: after, images: () => PNG, options }).body,
    );
  }

  it("A27 exit 0 and `appended N` when the second body extends the first", async () => {
    await bodies([...history, { role: "user", content: [{ type: "text", text: "more" }] }]);
    expect(await run(["cache-diff", "before.json", "after.json"])).toEqual({
      code: 0,
      out: "appended 1\n",
      err: "",
    });
  });

  it("A27 exit 1 with the first difference: message index and JSON path", async () => {
    const changed = [...history];
    changed[3] = { role: "assistant", content: [{ type: "text", text: "Made a card" }] };
    await bodies([...changed, { role: "user", content: [{ type: "text", text: "more" }] }]);
    const result = await run(["cache-diff", "before.json", "after.json"]);
    expect(result.code).toBe(1);
    expect(result.out).toBe("");
    expect(result.err).toBe(
      'verbatim cache-diff: first difference in message 3 at $.messages[3].content[0].text: "Made a card." became "Made a card"\n',
    );
  });

  it("exit 2 for a missing file; runs as a child process", async () => {
    expect((await run(["cache-diff", "before.json", "absent.json"])).code).toBe(2);
    await bodies([...history, { role: "user", content: [{ type: "text", text: "x" }] }]);
    const child = await promisify(execFile)(
      process.execPath,
      [join(ROOT, "bin/verbatim.js"), "cache-diff", "before.json", "after.json"],
      { cwd: work },
    );
    expect(child.stdout).toBe("appended 1\n");
  });
});
