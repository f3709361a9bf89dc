import { VerbatimError } from "verbatim-llm/core";

/**
 * Opaque page cursors, base64url-encoded: `k:` and the JSON key of the last row of the page
 * (the lists and search: the next page starts after it, found through an index, whatever its
 * depth), or `o:` and an offset (a conversation's context, which is read whole and sliced).
 */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString("base64url");
}

/** The cursor of the page after the row whose sort key is `key`. */
export function encodeKeyCursor(key: readonly string[]): string {
  return Buffer.from(`k:${JSON.stringify(key)}`).toString("base64url");
}

function notOurs(): VerbatimError {
  return new VerbatimError("invalid_request", "the cursor is not one this server gave", {
    where: "query.cursor",
    hint: "Pass next_cursor of the previous page unchanged",
  });
}

export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === "") return 0;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match === null) throw notOurs();
  return Number(match[1]);
}

/** The key a keyset cursor holds (`parts` strings), or undefined for the first page. */
export function decodeKeyCursor(
  cursor: string | undefined,
  parts: number,
): readonly string[] | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  if (!text.startsWith("k:")) throw notOurs();
  let key: unknown;
  try {
    key = JSON.parse(text.slice(2));
  } catch {
    throw notOurs();
  }
  if (
    !Array.isArray(key) ||
    key.length !== parts ||
    !key.every((part) => typeof part === "string" && part.length <= 1024)
  ) {
    throw notOurs();
  }
  return key as string[];
}
