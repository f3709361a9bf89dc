import { createRequire } from "node:module";

/**
 * Builds an `opencode.db` at test time from real `opencode export` files (OpenCode 1.2.5,
 * test/fixtures/interop/opencode/export, MIT): no real database under a licence that lets it be
 * redistributed was found (test/fixtures/interop/SOURCES.md, "Gaps").
 *
 * The schema is OpenCode's own, from anomalyco/opencode (MIT, "Copyright (c) 2025 opencode") at
 * `62a24c2ddaf56c4234898269b1951ab11483f57a` ("release: v1.2.5", the version that wrote the
 * exports; read from vladchatware/code.vlad.chat, a copy of OpenCode's history): the three
 * migrations of `packages/opencode/migration/` at that commit, verbatim, applied in order as
 * `packages/opencode/src/storage/db.ts` applies them (split at drizzle's statement breakpoints;
 * drizzle's own bookkeeping table is not written: nothing reads it but drizzle).
 *
 * The rows are written as OpenCode writes them (`packages/opencode/src/session/index.ts`
 * `toRow`, `updateMessage`, `updatePart`; `packages/opencode/src/session/todo.ts` `update`;
 * `packages/opencode/src/storage/json-migration.ts` for the project row):
 * - `session`: the columns of `Session.toRow(info)`; drizzle's JSON columns (`summary_diffs`,
 *   `revert`, `permission`) hold `JSON.stringify` of the value, absent values are NULL.
 * - `message`: `data` is the message info without `id` and `sessionID` (`InfoData` of
 *   `session.sql.ts`, those two are the `id` and `session_id` columns), `time_created` is
 *   `info.time.created`.
 * - `part`: `data` is the part without `id`, `sessionID` and `messageID` (`PartData`), which are
 *   the `id`, `session_id` and `message_id` columns.
 * - `todo`: the todos of the session's last `todowrite` call (`Todo.update` replaces a session's
 *   rows with the list the tool was given, `position` its index).
 * An export is read back from these rows by OpenCode 1.2.5 (`MessageV2.stream`:
 * `{ ...row.data, id, sessionID[, messageID] }`), so the export is the rows' content; only the
 * write times OpenCode stamps with `Date.now()` (`time_updated`, a part's `time_created`) are not
 * in it: the builder takes them from the record's own times, so the file is the same on every run.
 */

type Json = Record<string, unknown>;
export interface OpenCodeExportSession {
  info: Json;
  messages: { info: Json; parts: Json[] }[];
}

/** anomalyco/opencode@62a24c2d packages/opencode/migration/<name>/migration.sql, verbatim. */
const MIGRATIONS: readonly string[] = [
  // 20260127222353_familiar_lady_ursula
  `CREATE TABLE \`project\` (
	\`id\` text PRIMARY KEY,
	\`worktree\` text NOT NULL,
	\`vcs\` text,
	\`name\` text,
	\`icon_url\` text,
	\`icon_color\` text,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	\`time_initialized\` integer,
	\`sandboxes\` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE \`message\` (
	\`id\` text PRIMARY KEY,
	\`session_id\` text NOT NULL,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	\`data\` text NOT NULL,
	CONSTRAINT \`fk_message_session_id_session_id_fk\` FOREIGN KEY (\`session_id\`) REFERENCES \`session\`(\`id\`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE \`part\` (
	\`id\` text PRIMARY KEY,
	\`message_id\` text NOT NULL,
	\`session_id\` text NOT NULL,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	\`data\` text NOT NULL,
	CONSTRAINT \`fk_part_message_id_message_id_fk\` FOREIGN KEY (\`message_id\`) REFERENCES \`message\`(\`id\`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE \`permission\` (
	\`project_id\` text PRIMARY KEY,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	\`data\` text NOT NULL,
	CONSTRAINT \`fk_permission_project_id_project_id_fk\` FOREIGN KEY (\`project_id\`) REFERENCES \`project\`(\`id\`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE \`session\` (
	\`id\` text PRIMARY KEY,
	\`project_id\` text NOT NULL,
	\`parent_id\` text,
	\`slug\` text NOT NULL,
	\`directory\` text NOT NULL,
	\`title\` text NOT NULL,
	\`version\` text NOT NULL,
	\`share_url\` text,
	\`summary_additions\` integer,
	\`summary_deletions\` integer,
	\`summary_files\` integer,
	\`summary_diffs\` text,
	\`revert\` text,
	\`permission\` text,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	\`time_compacting\` integer,
	\`time_archived\` integer,
	CONSTRAINT \`fk_session_project_id_project_id_fk\` FOREIGN KEY (\`project_id\`) REFERENCES \`project\`(\`id\`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE \`todo\` (
	\`session_id\` text NOT NULL,
	\`content\` text NOT NULL,
	\`status\` text NOT NULL,
	\`priority\` text NOT NULL,
	\`position\` integer NOT NULL,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	CONSTRAINT \`todo_pk\` PRIMARY KEY(\`session_id\`, \`position\`),
	CONSTRAINT \`fk_todo_session_id_session_id_fk\` FOREIGN KEY (\`session_id\`) REFERENCES \`session\`(\`id\`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE TABLE \`session_share\` (
	\`session_id\` text PRIMARY KEY,
	\`id\` text NOT NULL,
	\`secret\` text NOT NULL,
	\`url\` text NOT NULL,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	CONSTRAINT \`fk_session_share_session_id_session_id_fk\` FOREIGN KEY (\`session_id\`) REFERENCES \`session\`(\`id\`) ON DELETE CASCADE
);
--> statement-breakpoint
CREATE INDEX \`message_session_idx\` ON \`message\` (\`session_id\`);--> statement-breakpoint
CREATE INDEX \`part_message_idx\` ON \`part\` (\`message_id\`);--> statement-breakpoint
CREATE INDEX \`part_session_idx\` ON \`part\` (\`session_id\`);--> statement-breakpoint
CREATE INDEX \`session_project_idx\` ON \`session\` (\`project_id\`);--> statement-breakpoint
CREATE INDEX \`session_parent_idx\` ON \`session\` (\`parent_id\`);--> statement-breakpoint
CREATE INDEX \`todo_session_idx\` ON \`todo\` (\`session_id\`);`,
  // 20260211171708_add_project_commands
  "ALTER TABLE `project` ADD `commands` text;",
  // 20260213144116_wakeful_the_professor
  `CREATE TABLE \`control_account\` (
	\`email\` text NOT NULL,
	\`url\` text NOT NULL,
	\`access_token\` text NOT NULL,
	\`refresh_token\` text NOT NULL,
	\`token_expiry\` integer,
	\`active\` integer NOT NULL,
	\`time_created\` integer NOT NULL,
	\`time_updated\` integer NOT NULL,
	CONSTRAINT \`control_account_pk\` PRIMARY KEY(\`email\`, \`url\`)
);`,
];

interface Statement {
  run(...values: unknown[]): unknown;
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

const json = (value: unknown): string | null =>
  value === undefined || value === null ? null : JSON.stringify(value);
const record = (value: unknown): Json =>
  typeof value === "object" && value !== null ? (value as Json) : {};
const num = (value: unknown): number | null => (typeof value === "number" ? value : null);
const without = (value: Json, keys: readonly string[]): Json =>
  Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));

/** Writes `file` (which must not exist) as OpenCode 1.2.5 would hold these sessions. */
export function buildOpenCodeDatabase(
  file: string,
  sessions: readonly OpenCodeExportSession[],
): void {
  const { DatabaseSync } = createRequire(import.meta.url)("node:sqlite") as {
    DatabaseSync: new (path: string) => Database;
  };
  const db = new DatabaseSync(file);
  try {
    // The pragmas of OpenCode's Database.Client that shape the file.
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA foreign_keys = ON");
    for (const migration of MIGRATIONS)
      for (const statement of migration.split("--> statement-breakpoint"))
        if (statement.trim() !== "") db.exec(statement);
    db.exec("BEGIN");
    insertProjects(db, sessions);
    const session = db.prepare(
      "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, revert, permission, time_created, time_updated, time_compacting, time_archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const message = db.prepare(
      "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
    );
    const part = db.prepare(
      "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
    );
    const todo = db.prepare(
      "INSERT INTO todo (session_id, content, status, priority, position, time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    for (const { info, messages } of sessions) {
      const summary = record(info.summary);
      const time = record(info.time);
      const sessionId = String(info.id);
      // Session.toRow(info)
      session.run(
        sessionId,
        String(info.projectID),
        typeof info.parentID === "string" ? info.parentID : null,
        String(info.slug),
        String(info.directory),
        String(info.title),
        String(info.version),
        typeof record(info.share).url === "string" ? String(record(info.share).url) : null,
        num(summary.additions),
        num(summary.deletions),
        num(summary.files),
        json(summary.diffs),
        json(info.revert),
        json(info.permission),
        Number(time.created),
        Number(time.updated),
        num(time.compacting),
        num(time.archived),
      );
      let todos: { list: Json[]; at: number } | undefined;
      for (const { info: messageInfo, parts } of messages) {
        const messageTime = record(messageInfo.time);
        const created = Number(messageTime.created);
        const written = num(messageTime.completed) ?? created;
        // Session.updateMessage: const { id, sessionID, ...data } = msg
        message.run(
          String(messageInfo.id),
          sessionId,
          created,
          written,
          JSON.stringify(without(messageInfo, ["id", "sessionID"])),
        );
        for (const value of parts) {
          const partTime = record(value.time);
          const stateTime = record(record(value.state).time);
          const at = num(partTime.start) ?? num(stateTime.start) ?? created;
          // Session.updatePart: const { id, messageID, sessionID, ...data } = part
          part.run(
            String(value.id),
            String(messageInfo.id),
            sessionId,
            at,
            num(partTime.end) ?? num(stateTime.end) ?? at,
            JSON.stringify(without(value, ["id", "messageID", "sessionID"])),
          );
          const input = record(record(value.state).input);
          if (value.tool === "todowrite" && Array.isArray(input.todos))
            todos = { list: input.todos.map(record), at: num(stateTime.end) ?? at };
        }
      }
      // Todo.update({ sessionID, todos }) of the last todowrite call
      for (const [position, item] of (todos?.list ?? []).entries())
        todo.run(
          sessionId,
          String(item.content),
          String(item.status),
          String(item.priority),
          position,
          todos?.at ?? 0,
          todos?.at ?? 0,
        );
    }
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/** One project row per project the sessions name, as JsonMigration writes a project file. */
function insertProjects(db: Database, sessions: readonly OpenCodeExportSession[]): void {
  const projects = new Map<string, { worktree: string; created: number; updated: number }>();
  for (const { info } of sessions) {
    const time = record(info.time);
    const id = String(info.projectID);
    const known = projects.get(id);
    projects.set(id, {
      worktree: known?.worktree ?? String(info.directory),
      created: Math.min(known?.created ?? Infinity, Number(time.created)),
      updated: Math.max(known?.updated ?? 0, Number(time.updated)),
    });
  }
  const insert = db.prepare(
    "INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?, ?, 'git', ?, ?, '[]')",
  );
  for (const [id, project] of projects)
    insert.run(id, project.worktree, project.created, project.updated);
}
