// A seeded job trajectory for the trajectory benchmark: turns of semantic items in the mix an
// agent run produces (prompts, messages, reasoning, tool calls and results, commands, file
// changes, searches, plans), with realistic sizes.
import type {
  StoredTurnItem,
  TrajectoryItem,
} from "../../packages/library/src/trajectory/index.js";

function mulberry32(seed: number): () => number {
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
  "the job reads files runs tests and writes a short report about what changed in the release notes".split(
    " ",
  );

export function generateTrajectory(options: {
  items: number;
  turns: number;
  seed: number;
}): StoredTurnItem[] {
  const random = mulberry32(options.seed);
  const text = (words: number) =>
    Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
  const rows: StoredTurnItem[] = [];
  const perTurn = Math.ceil(options.items / options.turns);
  for (let turn = 0; rows.length < options.items; turn++) {
    const turnId = `turn_${options.seed}_${turn}`;
    let position = 0;
    let call = 0;
    const push = (item: TrajectoryItem, key = `item_${turn}_${position}`) => {
      if (rows.length >= options.items || position >= perTurn) return;
      rows.push({ turn_id: turnId, position, revision: 1, item_key: key, item });
      position++;
    };
    push({ type: "user_message", text: text(40) }, `client:prompt_${turn}`);
    while (position < perTurn && rows.length < options.items) {
      const roll = random();
      const callId = `call_${turn}_${call++}_${Math.floor(random() * 1e9).toString(36)}`;
      const mechanism = random() < 0.3 ? "provider_hosted" : "local_dynamic";
      if (roll < 0.15) push({ type: "reasoning", summary: [text(30)] });
      else if (roll < 0.3)
        push({ type: "agent_message", text: text(60), provider_response_id: `resp_${callId}` });
      else if (roll < 0.6) {
        push({
          type: "tool_call",
          call_id: callId,
          name: "read_file",
          arguments: JSON.stringify({ path: `src/${text(1)}.ts` }),
          execution_mechanism: mechanism,
        });
        push({
          type: "tool_result",
          call_id: callId,
          name: "read_file",
          output: text(150),
          is_error: false,
          execution_mechanism: mechanism,
        });
      } else if (roll < 0.8) {
        push({
          type: "command_execution",
          call_id: callId,
          command: ["npm", "test", "--", text(1)],
          cwd: "/work",
          status: "completed",
          output: text(120),
          exit_code: random() < 0.2 ? 1 : 0,
          execution_mechanism: "local_dynamic",
        });
      } else if (roll < 0.9) {
        push({
          type: "file_change",
          call_id: callId,
          changes: [
            {
              path: `docs/${text(1)}.md`,
              kind: "update",
              diff: `@@ -1 +1 @@\n-${text(8)}\n+${text(8)}`,
            },
          ],
          status: "completed",
          execution_mechanism: "local_dynamic",
        });
      } else if (roll < 0.95) {
        push({
          type: "web_search",
          call_id: callId,
          query: text(5),
          status: "completed",
          results: [{ title: text(4), url: "https://example.com/a", snippet: text(20) }],
          execution_mechanism: "provider_hosted",
        });
      } else
        push({
          type: "plan",
          steps: [
            { step: text(6), status: "completed" },
            { step: text(6), status: "pending" },
          ],
        });
    }
  }
  return rows;
}
