/**
 * A seeded generator of agent sessions in Claude Code's and Codex's file shapes, for the
 * import benchmark: the same seed always writes the same bytes. Sessions vary in size (a few
 * are several times the average), with tool calls split one block per line (Claude Code) and
 * encrypted reasoning (Codex), so the importers do their real work.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** mulberry32: a small, fast, seeded pseudo-random generator. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "the file test build error function import module value return type check line server store archive".split(
    " ",
  );

function text(next: () => number, bytes: number): string {
  let out = "";
  while (out.length < bytes) out += `${WORDS[Math.floor(next() * WORDS.length)] ?? "x"} `;
  return out.slice(0, bytes);
}

function uuid(next: () => number): string {
  const hex = (count: number): string =>
    Array.from({ length: count }, () => Math.floor(next() * 16).toString(16)).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
}

function claudeSession(next: () => number, targetBytes: number): { id: string; text: string } {
  const id = uuid(next);
  const lines: string[] = [];
  let size = 0;
  let parent: string | null = null;
  let turn = 0;
  const push = (line: Record<string, unknown>): void => {
    const json = JSON.stringify({
      sessionId: id,
      version: "2.1.39",
      cwd: "/work",
      isSidechain: false,
      timestamp: `2026-01-01T00:00:${String(turn % 60).padStart(2, "0")}.000Z`,
      ...line,
    });
    lines.push(json);
    size += json.length + 1;
  };
  while (size < targetBytes) {
    turn++;
    const prompt = uuid(next);
    push({
      type: "user",
      uuid: prompt,
      parentUuid: parent,
      message: { role: "user", content: text(next, 200) },
    });
    const messageId = `msg_${uuid(next)}`;
    const thinking = uuid(next);
    push({
      type: "assistant",
      uuid: thinking,
      parentUuid: prompt,
      message: {
        id: messageId,
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "thinking", thinking: text(next, 300), signature: text(next, 120) }],
        usage: {
          input_tokens: 100,
          output_tokens: 50,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 10,
        },
      },
    });
    let last = thinking;
    const calls = 1 + Math.floor(next() * 4);
    const callLines: { uuid: string; id: string }[] = [];
    for (let call = 0; call < calls; call++) {
      const line = uuid(next);
      const callId = `toolu_${uuid(next)}`;
      push({
        type: "assistant",
        uuid: line,
        parentUuid: last,
        message: {
          id: messageId,
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [
            { type: "tool_use", id: callId, name: "Bash", input: { command: text(next, 60) } },
          ],
          usage: { input_tokens: 100, output_tokens: 50 },
        },
      });
      callLines.push({ uuid: line, id: callId });
      last = line;
    }
    for (const call of callLines) {
      const line = uuid(next);
      push({
        type: "user",
        uuid: line,
        parentUuid: call.uuid,
        message: {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: call.id,
              content: text(next, 500 + Math.floor(next() * 3000)),
            },
          ],
        },
        toolUseResult: { stdout: "…" },
      });
      last = line;
    }
    const answer = uuid(next);
    push({
      type: "assistant",
      uuid: answer,
      parentUuid: last,
      message: {
        id: `msg_${uuid(next)}`,
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: text(next, 400) }],
        usage: { input_tokens: 120, output_tokens: 80 },
      },
    });
    push({
      type: "file-history-snapshot",
      messageId: answer,
      snapshot: { trackedFileBackups: {} },
    });
    parent = answer;
  }
  return { id, text: `${lines.join("\n")}\n` };
}

function codexSession(next: () => number, targetBytes: number): { id: string; text: string } {
  const id = uuid(next);
  const lines: string[] = [];
  let size = 0;
  const push = (type: string, payload: Record<string, unknown>): void => {
    const json = JSON.stringify({ timestamp: "2026-01-01T00:00:00.000Z", type, payload });
    lines.push(json);
    size += json.length + 1;
  };
  push("session_meta", {
    id,
    cwd: "/work",
    originator: "codex_cli_rs",
    cli_version: "0.125.0",
    base_instructions: { text: text(next, 2000) },
  });
  let input = 0;
  while (size < targetBytes) {
    push("turn_context", { cwd: "/work", model: "gpt-5.5", approval_policy: "on-request" });
    const prompt = text(next, 200);
    push("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: prompt }],
    });
    push("event_msg", { type: "user_message", message: prompt });
    const calls = 1 + Math.floor(next() * 4);
    for (let call = 0; call < calls; call++) {
      push("response_item", {
        type: "reasoning",
        summary: [{ type: "summary_text", text: text(next, 200) }],
        encrypted_content: text(next, 400),
      });
      const callId = `call_${uuid(next)}`;
      if (next() < 0.3) {
        push("response_item", {
          type: "custom_tool_call",
          call_id: callId,
          name: "apply_patch",
          input: text(next, 600),
          status: "completed",
        });
        push("response_item", {
          type: "custom_tool_call_output",
          call_id: callId,
          output: text(next, 200),
        });
      } else {
        push("response_item", {
          type: "function_call",
          call_id: callId,
          name: "exec_command",
          arguments: JSON.stringify({ cmd: text(next, 60) }),
        });
        push("response_item", {
          type: "function_call_output",
          call_id: callId,
          output: text(next, 500 + Math.floor(next() * 3000)),
        });
      }
      input += 2000;
      push("event_msg", {
        type: "token_count",
        info: {
          total_token_usage: {
            input_tokens: input,
            cached_input_tokens: input / 2,
            output_tokens: input / 10,
          },
          last_token_usage: { input_tokens: 2000, cached_input_tokens: 1000, output_tokens: 200 },
        },
      });
    }
    const answer = text(next, 400);
    push("response_item", {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: answer }],
    });
    push("event_msg", { type: "agent_message", message: answer });
  }
  return { id, text: `${lines.join("\n")}\n` };
}

export interface GeneratedCorpus {
  readonly claudeFolder: string;
  readonly codexFolder: string;
  readonly bytes: number;
  readonly largestBytes: number;
}

/**
 * Writes `sessions` sessions (half in each shape) of about `totalBytes` in all under `folder`:
 * `claude/<project>/<id>.jsonl` and `codex/YYYY/MM/DD/rollout-…-<id>.jsonl`.
 */
export function generateCorpus(
  folder: string,
  sessions: number,
  totalBytes: number,
  seed: number,
): GeneratedCorpus {
  const next = random(seed);
  const claudeFolder = join(folder, "claude", "-work-project");
  const codexFolder = join(folder, "codex", "2026", "01", "01");
  mkdirSync(claudeFolder, { recursive: true });
  mkdirSync(codexFolder, { recursive: true });
  // Sizes: most near the average, one in twenty five times it.
  const weights = Array.from({ length: sessions }, () => (next() < 0.05 ? 5 : 0.5 + next()));
  const sum = weights.reduce((total, weight) => total + weight, 0);
  let bytes = 0;
  let largestBytes = 0;
  weights.forEach((weight, index) => {
    const target = Math.max(2000, Math.round((weight / sum) * totalBytes));
    const session = index % 2 === 0 ? claudeSession(next, target) : codexSession(next, target);
    const path =
      index % 2 === 0
        ? join(claudeFolder, `${session.id}.jsonl`)
        : join(codexFolder, `rollout-2026-01-01T00-00-00-${session.id}.jsonl`);
    writeFileSync(path, session.text);
    const size = Buffer.byteLength(session.text);
    bytes += size;
    largestBytes = Math.max(largestBytes, size);
  });
  return {
    claudeFolder: join(folder, "claude"),
    codexFolder: join(folder, "codex"),
    bytes,
    largestBytes,
  };
}
