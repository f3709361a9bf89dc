import { sql, type Kysely } from "kysely";
import { queryTemplate, type QueryTemplate } from "../query-template.js";
import type { StoreSchema } from "../schema.js";
import type { IdempotencyKeyRow } from "./gateway-idempotency.js";
import { BRANCH_COLUMNS, MESSAGE_COLUMNS } from "./gateway-messages.js";

/**
 * The multi-row inserts of a bulk import into the gateway store (`verbatim import … --into
 * <database>`, packages/server/src/gateway/import/chain-batch.ts): each table's rows given
 * as one flat list of values in its columns' order, inserted a few statements at a time.
 */

export const CONVERSATION_COLUMNS = ["id", "subject_uid", "created_at", "metadata"] as const;

export const KEY_COLUMNS = [
  "subject_uid",
  "idempotency_key",
  "operation",
  "request_sha256",
  "result",
  "created_at",
] as const satisfies readonly (keyof IdempotencyKeyRow)[];

/** A table's multi-row insert, kept compiled for each row count used (powers of two). */
interface InsertSpec {
  readonly table:
    | "ai_gateway_conversations"
    | "ai_gateway_branches"
    | "ai_gateway_messages"
    | "ai_gateway_idempotency_keys";
  readonly columns: readonly string[];
  /** Leave a row whose primary key is recorded already (prefix keys). */
  readonly keepExisting?: readonly ["subject_uid", "idempotency_key"];
  /** A column whose values are UTF-8 bytes, stored as TEXT (`cast(? as text)`, SQLite). */
  readonly textFromBytes?: string;
  readonly templates: Map<number, QueryTemplate<unknown[], never>>;
}

const insertSpec = (
  table: InsertSpec["table"],
  columns: readonly string[],
  options: Pick<InsertSpec, "keepExisting" | "textFromBytes"> = {},
): InsertSpec => ({ table, columns, ...options, templates: new Map() });

const CONVERSATIONS = insertSpec("ai_gateway_conversations", CONVERSATION_COLUMNS);
const BRANCHES = insertSpec("ai_gateway_branches", BRANCH_COLUMNS);
const MESSAGES = insertSpec("ai_gateway_messages", MESSAGE_COLUMNS);
const PACKED_MESSAGES = insertSpec("ai_gateway_messages", MESSAGE_COLUMNS, {
  textFromBytes: "content",
});
const KEYS = insertSpec("ai_gateway_idempotency_keys", KEY_COLUMNS);
const PREFIX_KEYS = insertSpec("ai_gateway_idempotency_keys", KEY_COLUMNS, {
  keepExisting: ["subject_uid", "idempotency_key"],
});

/** Most rows one statement inserts (messages: 16 values a row, 2,048 a statement). */
const MAX_ROWS_PER_STATEMENT = 128;

function insertTemplate(spec: InsertSpec, count: number): QueryTemplate<unknown[], never> {
  let template = spec.templates.get(count);
  if (template === undefined) {
    template = queryTemplate<unknown[], never>((db, slot) => {
      const width = spec.columns.length;
      const query = db.insertInto(spec.table).values(
        Array.from({ length: count }, (_, row) =>
          Object.fromEntries(
            spec.columns.map((column, index) => {
              const value = slot(row * width + index);
              return [column, column === spec.textFromBytes ? sql`cast(${value} as text)` : value];
            }),
          ),
        ) as never,
      );
      const keep = spec.keepExisting;
      return keep === undefined
        ? query
        : query.onConflict((conflict) => conflict.columns([...keep]).doNothing());
    });
    spec.templates.set(count, template);
  }
  return template;
}

/** Pushes the values of rows `from` … `to - 1` onto `values`, in the table's columns' order. */
export type RowValues = (from: number, to: number, values: unknown[]) => void;

/** Inserts `rows` rows of a table in few statements, each statement's values made by `fill`. */
async function insertFilled(
  trx: Kysely<StoreSchema>,
  spec: InsertSpec,
  rows: number,
  fill: RowValues,
): Promise<void> {
  let at = 0;
  while (at < rows) {
    let count = MAX_ROWS_PER_STATEMENT;
    while (count > rows - at) count >>= 1;
    const values: unknown[] = [];
    fill(at, at + count, values);
    await insertTemplate(spec, count).run(trx, ...values);
    at += count;
  }
}

/** Inserts a table's rows (its columns' values, row after row) in few statements. */
function insertRows(
  trx: Kysely<StoreSchema>,
  spec: InsertSpec,
  values: readonly unknown[],
): Promise<void> {
  const width = spec.columns.length;
  return insertFilled(trx, spec, values.length / width, (from, to, out) => {
    for (let at = from * width; at < to * width; at++) out.push(values[at]);
  });
}

/** Conversations: CONVERSATION_COLUMNS' values, row after row. */
export const insertConversationRows = (trx: Kysely<StoreSchema>, values: readonly unknown[]) =>
  insertRows(trx, CONVERSATIONS, values);

/** Branches: BRANCH_COLUMNS' values, row after row. */
export const insertBranchRows = (trx: Kysely<StoreSchema>, values: readonly unknown[]) =>
  insertRows(trx, BRANCHES, values);

/**
 * Messages: `rows` rows whose MESSAGE_COLUMNS' values `fill` makes, a statement's at a time;
 * with `contentAsBytes` (SQLite), each content is its text's UTF-8 bytes, stored as TEXT
 * (`cast(? as text)`).
 */
export const insertMessageRows = (
  trx: Kysely<StoreSchema>,
  rows: number,
  fill: RowValues,
  contentAsBytes: boolean,
) => insertFilled(trx, contentAsBytes ? PACKED_MESSAGES : MESSAGES, rows, fill);

/** Idempotency keys: KEY_COLUMNS' values, row after row. */
export const insertKeyRows = (trx: Kysely<StoreSchema>, values: readonly unknown[]) =>
  insertRows(trx, KEYS, values);

/** Prefix keys: as insertKeyRows, a key recorded already left as it is. */
export const insertPrefixKeyRows = (trx: Kysely<StoreSchema>, values: readonly unknown[]) =>
  insertRows(trx, PREFIX_KEYS, values);
