import { isUtf8 } from "node:buffer";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { VerbatimError, safeParseStrictJson, type StrictParseResult } from "verbatim-llm/core";
import { safeParseStrictJsonInSlices } from "verbatim-llm/internal";

/**
 * The one body parser: `application/json` in UTF-8, read by verbatim's strict JSON parser. A
 * body that is not UTF-8 is refused with the offset of its first bad byte (never read with
 * replacement characters); a body declared in another charset, or with a content coding the
 * server does not decode, is refused with 415 (never read as UTF-8).
 */

/** The offset of the first byte that does not belong to well-formed UTF-8, or -1. */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] ?? 0;
    if (lead < 0x80) {
      index++;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0; // no overlong forms
      if (lead === 0xed) high = 0x9f; // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f; // nothing past U+10FFFF
    } else {
      return index;
    }
    for (let next = 1; next < length; next++) {
      const byte = bytes[index + next];
      if (byte === undefined) return index;
      const min = next === 1 ? low : 0x80;
      const max = next === 1 ? high : 0xbf;
      if (byte < min || byte > max) return index;
    }
    index += length;
  }
  return -1;
}

/** The `charset` parameter of a Content-Type, lower case, or undefined. */
export function charsetOf(contentType: string): string | undefined {
  for (const parameter of contentType.split(";").slice(1)) {
    const equals = parameter.indexOf("=");
    if (equals < 0) continue;
    if (parameter.slice(0, equals).trim().toLowerCase() !== "charset") continue;
    return parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
  }
  return undefined;
}

function unsupported(message: string, where: string): VerbatimError {
  return new VerbatimError("unsupported_media_type", message, {
    where,
    hint: "Send JSON encoded as UTF-8 with Content-Type: application/json and no Content-Encoding; nothing was written",
  });
}

/**
 * The check of a body's declared encoding (preParsing: after authentication, before a byte of
 * the body is read); a request without a body is not concerned.
 */
export function declaredEncodingProblem(
  request: Pick<FastifyRequest, "headers">,
): VerbatimError | undefined {
  const length = request.headers["content-length"];
  const hasBody =
    request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
  if (!hasBody) return undefined;
  const coding = request.headers["content-encoding"];
  if (coding !== undefined && coding.trim().toLowerCase() !== "identity") {
    return unsupported(
      `the server does not decode Content-Encoding: ${coding.slice(0, 40)}`,
      "Content-Encoding header",
    );
  }
  const type = request.headers["content-type"];
  const charset = type === undefined ? undefined : charsetOf(type);
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return unsupported(
      `the body is declared as ${charset.slice(0, 40)}; the server reads UTF-8 only`,
      "Content-Type header",
    );
  }
  return undefined;
}

/**
 * Bodies from this size on are parsed in slices that yield to other requests between them: one
 * large body must not hold the event loop (and every other caller) for the whole parse.
 */
export const SLICED_PARSE_FROM_BYTES = 256 * 1024;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The body's value (undefined for an empty body); throws `invalid_utf8` or `invalid_json`. */
export async function parseJsonBody(bytes: Buffer): Promise<unknown> {
  return (await parseJsonBodyText(bytes)).value;
}

/** A body's text and the JSON value it holds. */
export interface JsonBodyText {
  readonly text: string;
  /** undefined for an empty body. */
  readonly value: unknown;
}

/**
 * The body decoded and parsed (the text is kept for whoever stores it, so it is decoded once);
 * throws `invalid_utf8` or `invalid_json`. From `SLICED_PARSE_FROM_BYTES` on both the decode
 * and the parse yield between slices.
 */
export async function parseJsonBodyText(bytes: Buffer): Promise<JsonBodyText> {
  const sliced = bytes.length >= SLICED_PARSE_FROM_BYTES;
  const text = sliced ? await bodyTextInSlices(bytes) : bodyText(bytes);
  if (text.trim() === "") return { text, value: undefined };
  const parsed = sliced
    ? await safeParseStrictJsonInSlices(text, nextTurn)
    : safeParseStrictJson(text);
  return { text, value: bodyValue(parsed) };
}

function bodyText(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw invalidUtf8(bytes);
  return bytes.toString("utf8");
}

/** As `bodyText`, a slice of bytes per turn of the event loop. */
async function bodyTextInSlices(bytes: Buffer): Promise<string> {
  // Fatal: a bad byte throws (its offset is found once, for the message); a BOM is kept as text,
  // as Buffer#toString keeps it.
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const parts: string[] = [];
  try {
    for (let start = 0; start < bytes.length; start += SLICED_PARSE_FROM_BYTES) {
      if (start > 0) await nextTurn();
      const end = Math.min(bytes.length, start + SLICED_PARSE_FROM_BYTES);
      parts.push(decoder.decode(bytes.subarray(start, end), { stream: true }));
    }
    parts.push(decoder.decode());
  } catch {
    throw invalidUtf8(bytes);
  }
  await nextTurn();
  return parts.join("");
}

function invalidUtf8(bytes: Buffer): VerbatimError {
  const offset = firstInvalidUtf8Offset(bytes);
  return new VerbatimError(
    "invalid_utf8",
    `the body is not valid UTF-8: byte ${offset} (0x${(bytes[offset] ?? 0).toString(16).padStart(2, "0")}) does not begin a well-formed character`,
    {
      where: `body at byte ${offset}`,
      hint: "Encode the body as UTF-8; nothing was written",
      details: { byte_offset: offset },
    },
  );
}

function bodyValue(parsed: StrictParseResult): unknown {
  if (parsed.ok) return parsed.value;
  const { problem } = parsed;
  throw new VerbatimError("invalid_json", `the body is not valid JSON: ${problem.message}`, {
    where: `body at line ${problem.line}, column ${problem.column} (${problem.path})`,
    hint: "Send one JSON value; nothing was written",
  });
}

/** Replaces Fastify's parsers with the one JSON parser. */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    parseJsonBody(typeof body === "string" ? Buffer.from(body, "utf8") : body).then(
      (value) => done(null, value),
      (error: unknown) => done(error as Error, undefined),
    );
  });
}
