import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { utf8DecodeLenient } from "../../core/bytes.js";
import { sha256Hex } from "../../core/hash.js";
import type { FileImport } from "../imported.js";
import { field, recordOf, stringOf } from "../json-access.js";
import { LeftOutLedger } from "../report.js";
import { readSourceFile } from "../source-files.js";
import { convertSession } from "./convert.js";
import { isOpenCodeStorageSession } from "./file-kinds.js";
import { byCreation, sessionOfExport, type OpenCodeSession } from "./session.js";

/**
 * Imports one OpenCode JSON file (docs/interop/opencode.md): an `opencode export <id>` file
 * (text a terminal printed before the JSON is skipped and reported), or a session file of the
 * JSON storage (`storage/session/<project>/ses_<id>.json`, read with its messages and parts).
 */
export async function importOpenCodeFile(file: string, bytes: Uint8Array): Promise<FileImport> {
  const ledger = new LeftOutLedger();
  const text = utf8DecodeLenient(bytes);
  const parsed = parseExport(text);
  if (parsed.value === undefined)
    return notImported(
      file,
      ledger,
      `not JSON (${parsed.error}); an OpenCode export or session file is one JSON object`,
    );
  if (parsed.skipped > 0) {
    ledger.add(
      file,
      "text before the export's JSON",
      `${parsed.skipped} character(s) a terminal printed before the JSON (e.g. "Exporting session: …"); the export itself was read`,
    );
  }
  const exported = sessionOfExport(parsed.value);
  if (exported !== undefined) return fileImport(file, exported, sha256Hex(bytes), ledger);
  const info = recordOf(parsed.value);
  if (
    info !== undefined &&
    isOpenCodeStorageSession(file) &&
    stringOf(field(info, "id")) !== undefined
  ) {
    if (
      basename(dirname(file)) === "info" &&
      !isDirectory(join(dirname(dirname(dirname(file))), "message"))
    )
      return notImported(
        file,
        ledger,
        "a session of OpenCode's first storage layout (storage/session/info/), whose messages have another shape; this importer reads the later storage layout, exports and the database",
      );
    return importStorageSession(file, info, bytes, ledger);
  }
  return notImported(
    file,
    ledger,
    "not an OpenCode export ({info, messages}) nor a session file of its storage folder (storage/session/<project>/ses_<id>.json)",
  );
}

/** The JSON of an export, skipping text before it (a terminal's "Exporting session: …"). */
function parseExport(text: string): { value?: unknown; skipped: number; error?: string } {
  try {
    return { value: JSON.parse(text) as unknown, skipped: 0 };
  } catch (error) {
    const start = text.indexOf("{");
    if (start > 0) {
      try {
        return { value: JSON.parse(text.slice(start)) as unknown, skipped: start };
      } catch {
        // Reported below with the first error.
      }
    }
    return { skipped: 0, error: error instanceof Error ? error.message : String(error) };
  }
}

function notImported(file: string, ledger: LeftOutLedger, reason: string): FileImport {
  ledger.add(file, "file", reason, 1);
  return {
    conversations: [],
    leftOut: ledger.list(),
    account: { file, lines: 1, imported: 0, leftOut: 1 },
  };
}

function fileImport(
  file: string,
  session: OpenCodeSession,
  sourceSha256: string,
  ledger: LeftOutLedger,
): FileImport {
  const converted = convertSession(session, { file, sourceSha256, ledger, firstRecord: 1 });
  return {
    conversations: converted.conversation === undefined ? [] : [converted.conversation],
    leftOut: ledger.list(),
    account: {
      file,
      lines: converted.records,
      imported: converted.records - converted.leftOutRecords,
      leftOut: converted.leftOutRecords,
    },
  };
}

function isDirectory(path: string): boolean {
  try {
    readdirSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The JSON files of a folder, sorted by name (OpenCode's ids sort by creation). */
function jsonFiles(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".json"))
      .map((entry) => join(folder, entry.name))
      .sort();
  } catch {
    return [];
  }
}

/**
 * A session of the JSON storage: `message/<session id>/*.json` and `part/<message id>/*.json`
 * beside `session/` (the storage OpenCode wrote before its database); the session's SHA-256 covers every file read, so a
 * session that grew is imported again and one that did not is left as it is.
 */
function importStorageSession(
  file: string,
  info: Readonly<Record<string, unknown>>,
  bytes: Uint8Array,
  ledger: LeftOutLedger,
): FileImport {
  const storage = dirname(dirname(dirname(file)));
  const sessionId = stringOf(field(info, "id")) ?? basename(file, ".json");
  const hashes = [sha256Hex(bytes)];
  const read = (path: string): Record<string, unknown> | undefined => {
    const result = readSourceFile(path);
    if (result.bytes === undefined) {
      ledger.add(file, "storage file", `${path} could not be read: ${result.reason}`, undefined);
      return undefined;
    }
    hashes.push(`${basename(path)}:${sha256Hex(result.bytes)}`);
    try {
      return recordOf(JSON.parse(utf8DecodeLenient(result.bytes))) as Record<string, unknown>;
    } catch (error) {
      ledger.add(file, "storage file", `${path} is not JSON (${String(error)})`, undefined);
      return undefined;
    }
  };
  const messages = jsonFiles(join(storage, "message", sessionId))
    .map((path) => read(path))
    .filter((message) => message !== undefined)
    .sort(byCreation)
    .map((message) => ({
      info: message,
      parts: jsonFiles(join(storage, "part", stringOf(field(message, "id")) ?? ""))
        .map((path) => read(path))
        .filter((part) => part !== undefined),
    }));
  return fileImport(file, { info, messages }, sha256Hex(hashes.join("\n")), ledger);
}
