import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bufferIO } from "../../packages/library/src/cli/io.js";
import { main } from "../../packages/library/src/cli/main.js";
import { importClineTask } from "../../packages/library/src/interop/cline/import.js";
import { fixtureFiles, shortName } from "./fixture-files.js";
import {
  CLINE_NATIVE_REQUESTS,
  CLINE_NATIVE_TASK_ID,
  writeClineNativeTask,
} from "./cline-native-task.js";
import { anthropicMessagesOf, type WireMessage } from "./cline-wire.js";

// Issue 35 item 3 (cline): Cline, Roo Code and Kilo Code task folders (SOURCES.md, "cline").
// The real folders are Roo Code's; Cline 3.51's native form is a folder written here in the
// shapes Cline's source writes (cline-native-task.ts: no licensed real one was found).
const apiFiles = fixtureFiles("cline", "api_conversation_history.json");
const folder = mkdtempSync(join(tmpdir(), "verbatim-cline-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const nativeFile = writeClineNativeTask(join(folder, "native"));
/** The same task as a Cline of before `modelInfo` on messages wrote it (models in the metadata). */
const nativeNoModelInfo = writeClineNativeTask(join(folder, "native-no-model-info"), {
  withModelInfo: false,
});
const taskFiles = [...apiFiles, nativeFile];
const label = (file: string): string =>
  file === nativeFile ? "constructed Cline 3.51 task (native tool_use)" : shortName(file);

async function run(argv: string[]) {
  const io = bufferIO({ cwd: folder });
  const code = await main(argv, io);
  return { code, out: io.out().toString("utf8"), err: io.err() };
}

type Json = Record<string, unknown>;
const readJson = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));
const uiOf = (apiFile: string): Json[] => {
  try {
    return readJson(join(dirname(apiFile), "ui_messages.json")) as Json[];
  } catch {
    return [];
  }
};

describe("issue 35 item 3: cline importer on task folders: nothing dropped silently", () => {
  for (const file of taskFiles) {
    it(`${label(file)}: every API message and every UI message imported or reported`, () => {
      const result = importClineTask(file, readFileSync(file));
      const messages = readJson(file) as Json[];
      expect(result.account).toMatchObject({ lines: messages.length });
      expect(result.account.imported + result.account.leftOut).toBe(messages.length);
      const conversation = result.conversations[0]?.conversation;
      expect(conversation).toBeDefined();
      const reported = (what: string) =>
        result.leftOut.filter((entry) => entry.what === what).reduce((n, e) => n + e.count, 0);
      // Every field the extension adds to a message or a block is named in the report.
      const fields = new Map<string, number>();
      const count = (key: string) => fields.set(key, (fields.get(key) ?? 0) + 1);
      for (const message of messages) {
        for (const key of Object.keys(message)) {
          if (key !== "role" && key !== "content") count(`message field ${key}`);
        }
        for (const block of Array.isArray(message.content) ? (message.content as Json[]) : []) {
          for (const key of Object.keys(block)) {
            const anthropic = [
              "type",
              "text",
              "id",
              "name",
              "input",
              "tool_use_id",
              "content",
              "is_error",
              "source",
              "thinking",
              "data",
              "citations",
              "cache_control",
            ];
            if (anthropic.includes(key) || (key === "signature" && block.type === "thinking"))
              continue;
            count(`${String(block.type)} block field ${key}`);
          }
        }
      }
      for (const [what, n] of fields) expect(reported(what), what).toBe(n);
      // Every text of the history is in the conversation (history or panel).
      const kept = new Set<string>();
      for (const message of conversation?.history ?? []) {
        for (const block of message.content) if (block.type === "text") kept.add(block.text);
      }
      for (const item of conversation?.items ?? []) {
        if ("text" in item && typeof item.text === "string") kept.add(item.text);
      }
      const shown = [...kept].join("\n");
      for (const message of messages) {
        const content = message.content;
        const texts =
          typeof content === "string"
            ? [content]
            : (content as Json[]).flatMap((block) =>
                typeof block.text === "string" ? [block.text] : [],
              );
        for (const text of texts) expect(shown.includes(text), text.slice(0, 80)).toBe(true);
      }
      // Every UI message: a request whose usage is imported, or a reported entry.
      const ui = uiOf(file);
      let requests = 0;
      let tokens = 0;
      let cost = 0;
      for (const entry of ui) {
        if (entry.say !== "api_req_started") continue;
        const info = JSON.parse(String(entry.text)) as Json;
        if (typeof info.tokensIn !== "number" && typeof info.tokensOut !== "number") continue;
        requests++;
        tokens += Number(info.tokensIn ?? 0) + Number(info.tokensOut ?? 0);
        cost += Number(info.cost ?? 0);
      }
      const uiReported = result.leftOut
        .filter((entry) => entry.file.endsWith("ui_messages.json"))
        .filter((entry) => entry.what.startsWith("UI message ") || entry.what.includes("without"))
        .reduce((n, entry) => n + entry.count, 0);
      expect(requests + uiReported).toBe(ui.length);
      const usage = conversation?.usage;
      expect((usage?.input ?? 0) + (usage?.output ?? 0)).toBe(tokens);
      if (requests > 0) expect(usage?.reportedCost).toBeCloseTo(cost, 9);
      const placed = [...(result.conversations[0]?.calls?.values() ?? [])];
      const unplaced = reported("request usage not placed on a message");
      expect(placed.length + unplaced).toBeLessThanOrEqual(requests);
      expect(
        placed.reduce((n, call) => n + call.usage.input + call.usage.output, 0),
      ).toBeLessThanOrEqual(tokens);
    });
  }

  it("Cline 3.51: usage and cost per request on the assistant message that answered it, with the model", () => {
    const imported = importClineTask(nativeFile, readFileSync(nativeFile)).conversations[0];
    const calls = [...(imported?.calls?.entries() ?? [])];
    expect(calls).toHaveLength(CLINE_NATIVE_REQUESTS.length);
    const history = imported?.conversation.history ?? [];
    for (const [index, [message, call]] of calls.entries()) {
      const request = CLINE_NATIVE_REQUESTS[index];
      expect(message?.role).toBe("assistant");
      expect(call?.usage).toEqual({
        input: request?.info.tokensIn,
        output: request?.info.tokensOut,
        cacheRead: request?.info.cacheReads,
        cacheWrite: request?.info.cacheWrites,
        webSearchRequests: 0,
        reportedCost: request?.info.cost,
      });
      expect(call?.model).toBe(request?.model.modelId);
      // The provider a call carries is the conversation's (the last request's), not the one
      // its api_req_started names: the task switched from anthropic to openai-native.
      expect(call?.provider).toBe("openai-native");
    }
    // Each on the assistant message that answered it (conversationHistoryIndex + 1 on).
    expect(
      calls[0]?.[0]?.content.some((b) => b.type === "toolCall" && b.name === "read_file"),
    ).toBe(true);
    expect(
      calls[1]?.[0]?.content.some((b) => b.type === "toolCall" && b.name === "write_to_file"),
    ).toBe(true);
    expect(calls[2]?.[0]).toBe(history.at(-2));
    // The model of the last request, and the sum of the stated costs.
    expect(imported?.conversation.model).toBe("gpt-5-2025-08-07");
    expect(imported?.conversation.estimatedCost).toEqual({
      kind: "reported",
      dollars: CLINE_NATIVE_REQUESTS.reduce((sum, request) => sum + request.info.cost, 0),
    });
  });

  it("Cline 3.51 task_metadata.json: without modelInfo on the messages, each request's model is the model_usage entry of its time", () => {
    const result = importClineTask(nativeNoModelInfo, readFileSync(nativeNoModelInfo));
    const imported = result.conversations[0];
    expect([...(imported?.calls?.values() ?? [])].map((call) => call.model)).toEqual(
      CLINE_NATIVE_REQUESTS.map((request) => request.model.modelId),
    );
    expect(imported?.conversation.model).toBe("gpt-5-2025-08-07");
    // files_in_context is reported; environment_history is a meta notice.
    expect(result.leftOut.map((entry) => entry.what)).toContain(
      "task metadata field files_in_context",
    );
    expect(
      imported?.conversation.items.some(
        (item) =>
          item.type === "notice" &&
          item.kind === "meta" &&
          item.text.includes("environment_history"),
      ),
    ).toBe(true);
  });

  it('Cline 3.51 native tool calls: a tool_result answers its call; a result sent back as text (the "cline" fallback id) and the call the task stopped in get Cline\'s "result missing"', () => {
    const imported = importClineTask(nativeFile, readFileSync(nativeFile)).conversations[0];
    const blocks = imported?.conversation.history.flatMap((message) => message.content) ?? [];
    const results = new Map(
      blocks.flatMap((block) =>
        block.type === "toolResult"
          ? [[block.callID, "content" in block ? block.content : ""]]
          : [],
      ),
    );
    expect(results.get("fc_constructed_write")).toBe(
      "[write_to_file for 'README.md'] Result:\nThe content was successfully saved to README.md.",
    );
    expect(results.get("toolu_01ConstructedReadFile")).toBe("result missing");
    expect(results.get("fc_constructed_complete")).toBe("result missing");
    // The text result stays in the history as the user text Cline sent.
    expect(
      blocks.some(
        (block) =>
          block.type === "text" && block.text.startsWith("[read_file for 'package.json'] Result:"),
      ),
    ).toBe(true);
    const added = imported?.conversation.items.filter(
      (item) => item.type === "notice" && item.kind === "interruptedToolResult",
    );
    expect(added).toHaveLength(2);
    expect(imported?.name).toBe(`cline-${CLINE_NATIVE_TASK_ID}`);
  });

  it("Roo Code: a condensed summary starts the history (a compaction); XML tool calls stay text", () => {
    const file = apiFiles.find((path) => path.includes("roo-3.2x-condensed")) ?? "";
    const result = importClineTask(file, readFileSync(file));
    const imported = result.conversations[0];
    const messages = readJson(file) as Json[];
    const summary = messages.findIndex((message) => message.isSummary === true);
    expect(imported?.conversation.history).toHaveLength(messages.length - summary);
    const kinds = imported?.conversation.items.map((item) =>
      item.type === "notice" ? item.kind : item.type,
    );
    expect(kinds).toContain("compactionSummary");
    // Roo Code's XML tool calls stay text: nothing is guessed into a tool call.
    expect(
      imported?.conversation.history.some((m) => m.content.some((b) => b.type === "toolCall")),
    ).toBe(false);
    expect(JSON.stringify(imported?.conversation.history)).toContain("<read_file>");
  });
});

// No published task folder holds these (SOURCES.md, "cline"): small folders written here in the
// shapes the extensions' sources write (Cline ToolResultUtils, Roo Code condense/index.ts and
// TaskHistoryStore), to check the mapping of each, never used as corpus files.
describe("issue 35 item 3: cline importer, constructed cases (shapes from the extensions' sources)", () => {
  const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
  const task = (id: string, api: unknown[], extra: Record<string, unknown> = {}): string => {
    const dir = join(folder, "constructed", id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "api_conversation_history.json"), JSON.stringify(api));
    for (const [name, value] of Object.entries(extra))
      writeFileSync(join(dir, name), JSON.stringify(value));
    return join(dir, "api_conversation_history.json");
  };

  it("images by SHA-256, tool errors, a task resumed after a restart, a subtask linked to its parent", () => {
    const file = task(
      "child-task",
      [
        {
          role: "user",
          content: [
            { type: "text", text: "<task>look</task>" },
            {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: png.toString("base64") },
            },
          ],
        },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a" } }],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              is_error: true,
              content: [{ type: "text", text: "ENOENT" }],
            },
          ],
        },
        { role: "assistant", content: "I could not read it." },
        {
          role: "user",
          content: [
            { type: "text", text: "[TASK RESUMPTION] This task was interrupted just now." },
          ],
        },
      ],
      {
        "history_item.json": {
          id: "child-task",
          parentTaskId: "parent-task",
          rootTaskId: "parent-task",
          number: 2,
        },
      },
    );
    const imported = importClineTask(file, readFileSync(file)).conversations[0];
    const history = imported?.conversation.history ?? [];
    const image = history[0]?.content[1];
    expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(imported?.images.get((image as { sha256: string }).sha256)).toEqual(new Uint8Array(png));
    expect(history[2]?.content[0]).toMatchObject({
      type: "toolResult",
      isError: true,
      content: "ENOENT",
    });
    expect(
      imported?.conversation.items.map((item) => (item.type === "notice" ? item.kind : item.type)),
    ).toContain("taskResumption");
    expect(imported?.parent).toEqual({ sourceId: "parent-task", agentId: "child-task" });
  });

  it("Roo Code's non-destructive condense and truncation: the history is what Roo Code sends", () => {
    const file = task("roo-condensed", [
      { role: "user", content: "first", condenseParent: "c1" },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "t0", name: "read_file", input: {} }],
        condenseParent: "c1",
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t0", content: "old" }],
        condenseParent: "c1",
      },
      {
        role: "user",
        content: [{ type: "text", text: "## Summary" }],
        isSummary: true,
        condenseId: "c1",
      },
      { role: "assistant", content: "hidden", truncationParent: "x1" },
      { role: "user", content: "[truncated]", isTruncationMarker: true, truncationId: "x1" },
      { role: "assistant", content: "kept" },
    ]);
    const result = importClineTask(file, readFileSync(file));
    const history = result.conversations[0]?.conversation.history ?? [];
    expect(history.map((m) => m.content.map((b) => (b.type === "text" ? b.text : b.type)))).toEqual(
      [["## Summary"], ["[truncated]"], ["kept"]],
    );
    expect(result.leftOut.map((e) => e.what)).toContain(
      "tool result content before a compaction boundary",
    );
    expect(result.account).toEqual(expect.objectContaining({ lines: 7, imported: 7, leftOut: 0 }));
  });
});

describe("issue 35 item 3: verbatim import cline --into <folder>, then render", () => {
  const into = join(folder, "packages");

  for (const file of taskFiles) {
    it(`${label(file)}: render --provider anthropic gives the messages the extension would send next`, async () => {
      const imported = await run(["import", "cline", dirname(file), "--into", into, "--json"]);
      expect(imported.code, imported.err).toBe(0);
      const report = JSON.parse(imported.out) as {
        conversations: { path: string; outcome: string }[];
      };
      expect(report.conversations).toHaveLength(1);
      const rendered = await run([
        "render",
        report.conversations[0]?.path ?? "",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
      ]);
      expect(rendered.code, rendered.err).toBe(0);
      const body = JSON.parse(rendered.out) as { messages: WireMessage[] };
      expect(anthropicMessagesOf(body.messages, "rendered")).toEqual(
        anthropicMessagesOf(readJson(file) as WireMessage[], "source"),
      );
    });
  }

  it("a task folder, a tasks/ folder and a file inside a task folder give the same package; a re-run changes nothing", async () => {
    const tasks = join(folder, "tasks");
    const task = dirname(apiFiles[0] ?? "");
    cpSync(task, join(tasks, basename(task)), { recursive: true });
    const target = join(folder, "paths");
    const byFolder = await run(["import", "cline", tasks, "--into", target, "--json"]);
    expect(JSON.parse(byFolder.out).conversations[0].outcome).toBe("imported");
    for (const path of [
      join(tasks, basename(task)),
      join(tasks, basename(task), "ui_messages.json"),
    ]) {
      const again = JSON.parse(
        (await run(["import", "cline", path, "--into", target, "--json"])).out,
      );
      expect(
        again.conversations.map((entry: { outcome: string; name: string }) => [
          entry.name,
          entry.outcome,
        ]),
      ).toEqual([[`cline-${basename(task)}`, "unchanged"]]);
    }
    // The task went on: the package is updated.
    const api = join(tasks, basename(task), "api_conversation_history.json");
    const grown = [
      ...(readJson(api) as Json[]),
      { role: "user", content: [{ type: "text", text: "one more thing" }] },
    ];
    writeFileSync(api, JSON.stringify(grown));
    const updated = JSON.parse(
      (await run(["import", "cline", tasks, "--into", target, "--json"])).out,
    );
    expect(updated.conversations[0].outcome).toBe("updated");
  });

  it("a file outside any task folder is reported, with what to name instead", async () => {
    const stray = join(folder, "notes.txt");
    writeFileSync(stray, "hello");
    const result = await run(["import", "cline", stray, "--into", join(folder, "stray"), "--json"]);
    const report = JSON.parse(result.out) as { leftOut: { what: string; reason: string }[] };
    expect(report.leftOut[0]?.reason).toMatch(
      /no api_conversation_history.json beside notes.txt.*name a Cline task folder/,
    );
  });
});
