import { basename } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { arrayOf, field, recordOf, stringOf, type JsonRecord } from "../json-access.js";
import { addChatMessages } from "./chat-rows.js";
import { RecordLedger, TurnRowsBuilder, type TrajectoryFileImport } from "./rows.js";
import type { StoredTurnItem } from "../../trajectory/row.js";

const SAMPLE_KEYS_LEFT_OUT =
  "sample-level facts (input, target, output, scores, metadata, store, events, usage, timing): not turn items";

/** Replaces `attachment://<id>` and `tc://<id>` strings by the text they name in the sample. */
function resolveReferences(value: unknown, sample: JsonRecord, unresolved: string[]): unknown {
  if (typeof value === "string") {
    const match = /^(attachment|tc):\/\/([0-9a-f]+)$/.exec(value);
    if (match === null) return value;
    const table =
      match[1] === "attachment"
        ? recordOf(field(sample, "attachments"))
        : recordOf(field(recordOf(field(sample, "transcript")), "content"));
    const resolved = stringOf(field(table, match[2] ?? ""));
    if (resolved === undefined) unresolved.push(value);
    return resolved ?? value;
  }
  if (Array.isArray(value))
    return value.map((entry) => resolveReferences(entry, sample, unresolved));
  const record = recordOf(value);
  if (record === undefined) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    Object.defineProperty(copy, key, {
      value: resolveReferences(record[key], sample, unresolved),
      enumerable: true,
    });
  }
  return copy;
}

/**
 * An Inspect eval log (JSON) as rows: one job turn per sample and epoch, its messages each a
 * record, with `attachment://` and `tc://` references resolved (docs/interop.md, "inspect").
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
  let recordBase = 0;
  for (const entry of arrayOf(field(root, "samples")) ?? []) {
    const sample = recordOf(entry) ?? {};
    const id = String(field(sample, "id") ?? rows.length);
    const epoch = String(field(sample, "epoch") ?? 1);
    const turn = new TurnRowsBuilder(`inspect:${task}:${id}:${epoch}`);
    const unresolved: string[] = [];
    const messages =
      arrayOf(resolveReferences(field(sample, "messages") ?? [], sample, unresolved)) ?? [];
    for (const reference of unresolved) {
      ledger.leftOutPart(
        recordBase,
        "unresolved reference",
        `${reference} names nothing in the sample's attachments or transcript`,
      );
    }
    addChatMessages(messages, turn, ledger, (index) => `inspect:messages.${index}`, recordBase);
    recordBase += messages.length;
    for (const key of Object.keys(sample)) {
      if (!["messages", "id", "epoch", "attachments", "transcript"].includes(key)) {
        ledger.leftOutPart(undefined, `sample ${key}`, SAMPLE_KEYS_LEFT_OUT);
      }
    }
    rows.push(...turn.rows);
  }
  return ledger.result(rows);
}
