import { basename } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { arrayOf, field, recordOf } from "../json-access.js";
import { addChatMessages } from "./chat-rows.js";
import { sweAgentModelStats } from "./source-usage.js";
import { RecordLedger, TurnRowsBuilder, type TrajectoryFileImport } from "./rows.js";
import { nestsTooDeep } from "../../core/json-depth.js";
import { NESTED_TOO_DEEP } from "../jsonl.js";

const LEFT_OUT_KEYS: Readonly<Record<string, string>> = {
  trajectory:
    "SWE-agent's step list (thought, action, observation, timing, state): the same steps the history holds, which is imported",
  info: "run facts (exit status, submission patch): job-level facts, not turn items; its model_stats are kept as the job's usage",
  environment: "the name of the run's environment, not a turn item",
  replay_config: "the configuration to replay the run, not a turn item",
};

/**
 * A SWE-agent `.traj` file as the rows of one job turn: its `history` (the messages the model
 * saw), each message a record (docs/interop.md, "swe-agent").
 */
export function importSweAgentTrajectory(file: string, bytes: Uint8Array): TrajectoryFileImport {
  const ledger = new RecordLedger(file);
  const turnId = `swe-agent:${basename(file).replace(/\.traj$/, "")}`;
  const rows = new TurnRowsBuilder(turnId);
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8DecodeLenient(bytes));
  } catch (error) {
    ledger.leftOutRecord(0, "file", `not JSON: ${(error as Error).message}`);
    return ledger.result([]);
  }
  if (nestsTooDeep(parsed)) {
    ledger.leftOutRecord(0, "file", NESTED_TOO_DEEP);
    return ledger.result([]);
  }
  const root = recordOf(parsed) ?? {};
  const history = arrayOf(field(root, "history"));
  if (history === undefined) {
    ledger.leftOutRecord(0, "file", "not a SWE-agent trajectory: it has no history array");
    return ledger.result([]);
  }
  addChatMessages(history, rows, ledger, (index) => `swe-agent:history.${index}`);
  for (const key of Object.keys(root)) {
    if (key === "history") continue;
    ledger.leftOutPart(
      undefined,
      key,
      Object.hasOwn(LEFT_OUT_KEYS, key)
        ? (LEFT_OUT_KEYS[key] ?? "")
        : "a field this importer does not know; reported so that nothing is lost silently",
    );
  }
  // The stats are the run's totals: no history message says which call cost what.
  const usage = sweAgentModelStats(recordOf(field(recordOf(field(root, "info")), "model_stats")));
  return ledger.result(rows.rows, usage === undefined ? undefined : new Map([[turnId, [usage]]]));
}
