import { statSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { recordOf, type JsonRecord } from "../json-access.js";
import type { OpenCodeSession } from "./session.js";

/** What the import keeps from a table of opencode.db other than session, message and part. */
const OTHER_TABLES: Readonly<Record<string, string>> = {
  todo: "the sessions' todo lists (OpenCode's todo tool state), not conversation",
  session_share: "share links and their secrets, left out on purpose",
  permission: "per-project permission rules, not conversation",
  event: "OpenCode's event log of the sessions (a copy of what the tables hold)",
};

/** The subset of node:sqlite's DatabaseSync this reader uses. */
interface SqliteStatement {
  all(...values: unknown[]): unknown[];
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  close(): void;
}
type SqliteModule = {
  DatabaseSync: new (path: string | URL, options: { readOnly: boolean }) => SqliteDatabase;
};

/** An open opencode.db, read a session at a time. */
export interface OpenCodeDatabase {
  readonly bytes: number;
  /** Session ids, each parent before its sub-sessions, oldest first. */
  sessionIds(): string[];
  /** A session's rows as an export would hold them, with the text its SHA-256 is taken of. */
  session(id: string): { value: OpenCodeSession; rowsText: string } | undefined;
  /** Tables holding rows that are not imported, with the reason. */
  otherTables(): { name: string; reason: string }[];
  close(): void;
}

/**
 * Opens OpenCode's SQLite database read-only with Node's built-in `node:sqlite` (the library
 * has no native module): Node 22.13 and later, and 24. With a `-wal` file beside it (OpenCode
 * running, or not checkpointed) it is opened as SQLite's readers do; without one, as immutable,
 * so that reading creates no file beside it.
 */
export async function openOpenCodeDatabase(
  file: string,
): Promise<{ database: OpenCodeDatabase } | { reason: string }> {
  let sqlite: SqliteModule;
  try {
    // By a name the type checker does not resolve: @types/node may predate node:sqlite.
    const name = "node:sqlite";
    sqlite = (await import(name)) as SqliteModule;
  } catch {
    return {
      reason: `not read: this Node.js (${process.version}) has no node:sqlite, which reads opencode.db; run the import with Node.js 22.13 or later (or 24), or export the sessions with \`opencode export <session id>\` and import those files`,
    };
  }
  let bytes: number;
  let hasWal: boolean;
  try {
    bytes = statSync(file).size;
    hasWal = statSync(`${file}-wal`, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    return { reason: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
  let db: SqliteDatabase;
  try {
    const url = pathToFileURL(file);
    if (!hasWal) url.search = "immutable=1";
    db = new sqlite.DatabaseSync(url, { readOnly: true });
    const tables = new Set(
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((row) => String(recordOf(row)?.["name"])),
    );
    if (!tables.has("session") || !tables.has("message") || !tables.has("part")) {
      db.close();
      return {
        reason: "not read: not an OpenCode database (it has no session, message and part tables)",
      };
    }
    return { database: reader(db, bytes, tables) };
  } catch (error) {
    return {
      reason: `not read: SQLite could not open it (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

function reader(db: SqliteDatabase, bytes: number, tables: ReadonlySet<string>): OpenCodeDatabase {
  const sessionRow = db.prepare("SELECT * FROM session WHERE id = ?");
  const messageRows = db.prepare(
    "SELECT id, session_id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id",
  );
  const partRows = db.prepare(
    "SELECT id, message_id, session_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
  );
  return {
    bytes,
    sessionIds() {
      const rows = db
        .prepare("SELECT id, parent_id FROM session ORDER BY time_created, id")
        .all()
        .map((row) => recordOf(row) ?? {});
      return parentsFirst(rows);
    },
    session(id) {
      const row = recordOf(sessionRow.all(id)[0]);
      if (row === undefined) return undefined;
      const parts = new Map<string, JsonRecord[]>();
      const texts: string[] = [JSON.stringify(row)];
      for (const partRow of partRows.all(id)) {
        const record = recordOf(partRow) ?? {};
        const messageId = String(record["message_id"]);
        texts.push(String(record["id"]), String(record["data"]));
        const part = {
          ...dataOf(record["data"]),
          id: record["id"],
          sessionID: id,
          messageID: messageId,
        };
        const list = parts.get(messageId);
        if (list === undefined) parts.set(messageId, [part]);
        else list.push(part);
      }
      const messages = messageRows.all(id).map((messageRow) => {
        const record = recordOf(messageRow) ?? {};
        const messageId = String(record["id"]);
        texts.push(messageId, String(record["data"]));
        return {
          info: { ...dataOf(record["data"]), id: messageId, sessionID: id },
          parts: parts.get(messageId) ?? [],
        };
      });
      return { value: { info: sessionInfo(row), messages }, rowsText: texts.join("\n") };
    },
    otherTables() {
      const found: { name: string; reason: string }[] = [];
      for (const [name, reason] of Object.entries(OTHER_TABLES)) {
        if (!tables.has(name)) continue;
        const count = Number(
          recordOf(db.prepare(`SELECT count(*) AS n FROM "${name}"`).all()[0])?.["n"] ?? 0,
        );
        if (count > 0) found.push({ name, reason: `${count} row(s): ${reason}` });
      }
      return found;
    },
    close: () => db.close(),
  };
}

/** Session ids ordered so that each parent comes before its sub-sessions. */
function parentsFirst(rows: readonly JsonRecord[]): string[] {
  const ids = new Set(rows.map((row) => String(row["id"])));
  const children = new Map<string, string[]>();
  const roots: string[] = [];
  for (const row of rows) {
    const id = String(row["id"]);
    const parent = typeof row["parent_id"] === "string" ? row["parent_id"] : undefined;
    if (parent === undefined || !ids.has(parent)) roots.push(id);
    else children.set(parent, [...(children.get(parent) ?? []), id]);
  }
  const ordered: string[] = [];
  const queue = [...roots];
  for (let index = 0; index < queue.length; index++) {
    const id = queue[index] as string;
    ordered.push(id);
    queue.push(...(children.get(id) ?? []));
  }
  return ordered;
}

/** A session row (its columns) in the shape of the session info of an export. */
function sessionInfo(row: JsonRecord): JsonRecord {
  const json = (value: unknown): unknown => (typeof value === "string" ? dataOf(value) : value);
  const info: Record<string, unknown> = {
    id: row["id"],
    slug: row["slug"],
    version: row["version"],
    projectID: row["project_id"],
    directory: row["directory"],
    title: row["title"],
    time: { created: row["time_created"], updated: row["time_updated"] },
  };
  if (typeof row["parent_id"] === "string") info["parentID"] = row["parent_id"];
  if (typeof row["share_url"] === "string") info["share"] = { url: row["share_url"] };
  if (row["revert"] !== null && row["revert"] !== undefined) info["revert"] = json(row["revert"]);
  return info;
}

/** A row's `data` column parsed as a JSON object ({} when it is not one). */
function dataOf(text: unknown): JsonRecord {
  if (typeof text !== "string") return {};
  try {
    return recordOf(JSON.parse(text)) ?? {};
  } catch {
    return {};
  }
}
