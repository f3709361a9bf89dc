import { VerbatimError } from "verbatim-llm/core";

/** Opaque list cursors: the offset of the next page, base64url-encoded. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString("base64url");
}

export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === "") return 0;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match === null) {
    throw new VerbatimError("invalid_request", "the cursor is not one this server gave", {
      where: "query.cursor",
      hint: "Pass next_cursor of the previous page unchanged",
    });
  }
  return Number(match[1]);
}
