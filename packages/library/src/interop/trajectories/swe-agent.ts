import { basename } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { arrayOf, field, recordOf } from "../json-access.js";
import { addChatMessages } from "./chat-rows.js";
import { RecordLedger, TurnRowsBuilder, type TrajectoryFileImport } from "./rows.js";

const LEFT_OUT_KEYS: Readonly<Record<string, string>> = {
  trajectory:
    "SWE-agent's step list (thought, action, observation, timing, state): the same steps the history holds, which is imported",
  info: "run facts (exit status, submission patch, model stats): job-level facts, not turn items",
  environment: "the name of the run's environment, not a turn item",
  replay_config: "the configuration to replay the run, not a turn item",
};

/**
 * A SWE-agent `.traj` file as the rows of one job turn: its `history` (the messages the model
 * saw), each message a record (docs/interop.md, "swe-agent").
 */
export function importSweAgentTrajectory(file: string, bytes: Uint8Array): TrajectoryFileImport {
  const ledger = new RecordLedger(file);
  const rows = new TurnRowsBuilder(`swe-agent:${basename(file).replace(/\.traj$/, "")}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8DecodeLenient(bytes));
  } catch (error) {
    ledger.leftOutRecord(0, "file", `not JSON: ${(error as Error).message}`);
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
  return ledger.result(rows.rows);
}
