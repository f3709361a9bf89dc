import { basename } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { arrayOf, field, recordOf, stringOf } from "../json-access.js";
import { addChatMessages } from "./chat-rows.js";
import { inspectCallUsage } from "./inspect-call-usage.js";
import {
  ReferenceBudgetExceeded,
  referenceBudget,
  resolveReferences,
} from "./inspect-references.js";
import { RecordLedger, TurnRowsBuilder, type TrajectoryFileImport } from "./rows.js";
import { inspectModelUsage } from "./source-usage.js";
import type { StoredTurnItem } from "../../trajectory/row.js";
import type { ModelUsage } from "../../trajectory/usage.js";
import { nestsTooDeep } from "../../core/json-depth.js";
import { NESTED_TOO_DEEP } from "../jsonl.js";

const SAMPLE_KEYS_LEFT_OUT =
  "sample-level facts (input, target, output, scores, metadata, store, events, timing): not turn items";
const KEPT_SAMPLE_KEYS = ["messages", "id", "epoch", "attachments", "transcript"];

/**
 * An Inspect eval log (JSON) as rows: one job turn per sample and epoch, its messages each a
 * record, with `attachment://` and `tc://` references resolved within a budget (a sample whose
 * references would expand past it is refused and reported). Model events give the usage of the
 * calls behind assistant messages; a sample's `model_usage` is its job's totals
 * (docs/interop.md, "inspect"; docs/trajectories.md, "Usage and cost").
 */
export function importInspectLog(file: string, bytes: Uint8Array): TrajectoryFileImport {
  const ledger = new RecordLedger(file);
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
  if (arrayOf(field(root, "samples")) === undefined) {
    ledger.leftOutRecord(
      0,
      "file",
      "not an Inspect eval log with samples: it has no samples array",
    );
    return ledger.result([]);
  }
  const evalSpec = recordOf(field(root, "eval"));
  // The eval's own id names the run (two logs of one task are two runs).
  const run =
    stringOf(field(evalSpec, "eval_id")) ??
    stringOf(field(evalSpec, "run_id")) ??
    basename(file).replace(/\.json$/, "");
  const task = `${stringOf(field(evalSpec, "task")) ?? "task"}:${run}`;
  for (const key of Object.keys(root)) {
    if (key !== "samples")
      ledger.leftOutPart(
        undefined,
        key,
        "eval-level facts (spec, plan, results, stats): not turn items",
      );
  }
  const rows: StoredTurnItem[] = [];
  const jobUsage = new Map<string, ModelUsage[]>();
  let recordBase = 0;
  for (const entry of arrayOf(field(root, "samples")) ?? []) {
    const sample = recordOf(entry) ?? {};
    const id = String(field(sample, "id") ?? rows.length);
    const epoch = String(field(sample, "epoch") ?? 1);
    const turnId = `inspect:${task}:${id}:${epoch}`;
    const turn = new TurnRowsBuilder(turnId);
    const raw = arrayOf(field(sample, "messages")) ?? [];
    const unresolved: string[] = [];
    const budget = referenceBudget(sample);
    let messages: readonly unknown[];
    try {
      messages = arrayOf(resolveReferences(raw, sample, unresolved, budget)) ?? [];
    } catch (error) {
      if (!(error instanceof ReferenceBudgetExceeded)) throw error;
      const what = `sample ${id} epoch ${epoch}`;
      const reason = `refused: its attachment:// and tc:// references expand to more than ${budget} bytes (the budget of this sample: its attachments and transcript once, repeats of them up to ten times their size and 64 KiB, at most 4 MiB more); nothing of the sample was imported`;
      if (raw.length === 0) ledger.leftOutRecord(recordBase, what, reason);
      raw.forEach((_, index) => ledger.leftOutRecord(recordBase + index + 1, what, reason));
      recordBase += raw.length;
      continue;
    }
    for (const reference of unresolved) {
      ledger.leftOutPart(
        recordBase,
        "unresolved reference",
        `${reference} names nothing in the sample's attachments or transcript`,
      );
    }
    const callUsage = inspectCallUsage(raw, arrayOf(field(sample, "events")) ?? []);
    addChatMessages(
      messages,
      turn,
      ledger,
      (index) => `inspect:messages.${index}`,
      recordBase,
      callUsage,
    );
    recordBase += messages.length;
    const totals = inspectModelUsage(recordOf(field(sample, "model_usage")));
    if (totals.length > 0) jobUsage.set(turnId, totals);
    for (const key of Object.keys(sample)) {
      if (KEPT_SAMPLE_KEYS.includes(key) || (key === "model_usage" && totals.length > 0)) continue;
      ledger.leftOutPart(undefined, `sample ${key}`, SAMPLE_KEYS_LEFT_OUT);
    }
    rows.push(...turn.rows);
  }
  return ledger.result(rows, jobUsage);
}
