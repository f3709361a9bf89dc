import { canonicalJsonFragment } from "../core/canonical-json.js";
import type { SavedConversation } from "../format/conversation-schema.js";

/**
 * An incremental writer of the canonical bytes of a conversation (the same bytes as
 * `encodeConversation`, A2), as a list of pieces. Each element of a top-level array and each
 * entry of a top-level map is encoded once and reused while the same value (by identity) sits
 * at the same place, so a save encodes only what is new. Values passed in are treated as
 * immutable: give a changed item or message a new object.
 */
const ELEMENT_INDENT = "\n    ";
const COMMA = Buffer.from(",");
const EMPTY_ARRAY = Buffer.from("[]");
const EMPTY_OBJECT = Buffer.from("{}");
const OPEN_ARRAY = Buffer.from("[");
const OPEN_OBJECT = Buffer.from("{");
const CLOSE_ARRAY = Buffer.from("\n  ]");
const CLOSE_OBJECT = Buffer.from("\n  }");
const CLOSE_DOCUMENT = Buffer.from("\n}\n");

interface ArrayField {
  values: readonly unknown[];
  /** Chunks of the elements after the last full run (undefined inside full runs). */
  chunks: (Buffer | undefined)[];
  /** Full runs of RUN_LENGTH elements joined into one buffer, so a file is a few large writes. */
  runs: Buffer[];
}

const RUN_LENGTH = 256;

interface MapField {
  /** key → last value and its chunk. */
  entries: Map<string, { value: unknown; chunk: Buffer }>;
  sortedKeys: string[];
}

export class ConversationEncoder {
  private readonly arrays = new Map<string, ArrayField>();
  private readonly maps = new Map<string, MapField>();
  private readonly elementChunks = new WeakMap<object, Buffer>();
  private readonly headers = new Map<string, { first: Buffer; next: Buffer }>();

  /** The canonical bytes of `conversation` as pieces (concatenated, they are the file). */
  encode(conversation: SavedConversation): Buffer[] {
    const record = conversation as unknown as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    const pieces: Buffer[] = [];
    let first = true;
    for (const key of keys) {
      const value = record[key];
      if (value === undefined) continue;
      const header = this.header(key);
      pieces.push(first ? header.first : header.next);
      first = false;
      if (Array.isArray(value)) this.encodeArray(key, value, pieces);
      else if (value instanceof Map) this.encodeMap(key, value as Map<unknown, unknown>, pieces);
      else pieces.push(Buffer.from(canonicalJsonFragment(value, 1)));
    }
    if (first) return [Buffer.from("{}\n")];
    pieces.push(CLOSE_DOCUMENT);
    return pieces;
  }

  private header(key: string): { first: Buffer; next: Buffer } {
    let header = this.headers.get(key);
    if (header === undefined) {
      const member = `  ${JSON.stringify(key)} : `;
      header = { first: Buffer.from(`{\n${member}`), next: Buffer.from(`,\n${member}`) };
      this.headers.set(key, header);
    }
    return header;
  }

  private elementChunk(value: unknown): Buffer {
    if (typeof value === "object" && value !== null) {
      let chunk = this.elementChunks.get(value);
      if (chunk === undefined) {
        chunk = Buffer.from(ELEMENT_INDENT + canonicalJsonFragment(value, 2));
        this.elementChunks.set(value, chunk);
      }
      return chunk;
    }
    if (value === undefined) canonicalJsonFragment([undefined]); // refuses with the writer's error
    return Buffer.from(ELEMENT_INDENT + canonicalJsonFragment(value, 2));
  }

  /**
   * One full run as one buffer. Elements without a chunk are encoded as text and turned into
   * bytes together (no buffer per element); chunks already held are reused. The elements'
   * own chunks are then forgotten: the run holds their bytes.
   */
  private joinRun(
    values: readonly unknown[],
    start: number,
    end: number,
    reusedChunk: (index: number) => Buffer | undefined,
  ): Buffer {
    const parts: Buffer[] = [];
    let text = "";
    for (let index = start; index < end; index++) {
      const value = values[index];
      const isObject = typeof value === "object" && value !== null;
      const chunk = reusedChunk(index) ?? (isObject ? this.elementChunks.get(value) : undefined);
      if (index > 0) text += ",";
      if (chunk === undefined) {
        if (value === undefined) canonicalJsonFragment([undefined]); // refuses with the writer's error
        text += ELEMENT_INDENT + canonicalJsonFragment(value, 2);
      } else {
        if (text.length > 0) parts.push(Buffer.from(text));
        text = "";
        parts.push(chunk);
      }
      if (isObject) this.elementChunks.delete(value);
    }
    if (text.length > 0) parts.push(Buffer.from(text));
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }

  private encodeArray(key: string, values: readonly unknown[], pieces: Buffer[]): void {
    if (values.length === 0) {
      this.arrays.set(key, { values, chunks: [], runs: [] });
      pieces.push(EMPTY_ARRAY);
      return;
    }
    const previous = this.arrays.get(key);
    const previousValues = previous?.values ?? [];
    const previousChunks = previous?.chunks ?? [];
    const previousRuns = previous?.runs ?? [];
    // Only the elements after the last full run keep a chunk of their own: a full run keeps
    // just its joined buffer (so the encoder holds about one copy of the file, not two), and
    // is encoded again only when one of its elements is replaced.
    const chunks: (Buffer | undefined)[] = new Array<Buffer | undefined>(values.length);
    const runs: Buffer[] = [];
    const reusedChunk = (index: number): Buffer | undefined =>
      index < previousValues.length && previousValues[index] === values[index]
        ? previousChunks[index]
        : undefined;
    pieces.push(OPEN_ARRAY);
    for (let start = 0; start < values.length; start += RUN_LENGTH) {
      const end = Math.min(start + RUN_LENGTH, values.length);
      if (end - start < RUN_LENGTH) {
        // The newest elements: written piece by piece until a run is full.
        for (let index = start; index < end; index++) {
          const chunk = reusedChunk(index) ?? this.elementChunk(values[index]);
          chunks[index] = chunk;
          if (index > 0) pieces.push(COMMA);
          pieces.push(chunk);
        }
        break;
      }
      const runIndex = start / RUN_LENGTH;
      let run = previousValues.length >= end ? previousRuns[runIndex] : undefined;
      for (let index = start; run !== undefined && index < end; index++) {
        if (previousValues[index] !== values[index]) run = undefined;
      }
      if (run === undefined) run = this.joinRun(values, start, end, reusedChunk);
      runs.push(run);
      pieces.push(run);
    }
    pieces.push(CLOSE_ARRAY);
    this.arrays.set(key, { values: values.slice(), chunks, runs });
  }

  private encodeMap(key: string, map: Map<unknown, unknown>, pieces: Buffer[]): void {
    const previous = this.maps.get(key);
    const entries = new Map<string, { value: unknown; chunk: Buffer }>();
    let sameKeys = previous !== undefined && previous.entries.size === map.size;
    for (const [entryKey, value] of map) {
      if (typeof entryKey !== "string") {
        canonicalJsonFragment(new Map([[entryKey, value]])); // refuses with the writer's error
        continue;
      }
      const old = previous?.entries.get(entryKey);
      if (old === undefined) sameKeys = false;
      if (value === undefined) continue;
      const chunk =
        old !== undefined && old.value === value
          ? old.chunk
          : Buffer.from(
              `${ELEMENT_INDENT}${JSON.stringify(entryKey)} : ${canonicalJsonFragment(value, 2)}`,
            );
      entries.set(entryKey, { value, chunk });
    }
    const sortedKeys =
      sameKeys && previous !== undefined && previous.entries.size === entries.size
        ? previous.sortedKeys
        : [...entries.keys()].sort();
    this.maps.set(key, { entries, sortedKeys });
    if (sortedKeys.length === 0) {
      pieces.push(EMPTY_OBJECT);
      return;
    }
    pieces.push(OPEN_OBJECT);
    let firstEntry = true;
    for (const entryKey of sortedKeys) {
      if (!firstEntry) pieces.push(COMMA);
      firstEntry = false;
      pieces.push((entries.get(entryKey) as { chunk: Buffer }).chunk);
    }
    pieces.push(CLOSE_OBJECT);
  }
}

/** Characters of canonical text turned into one streamed piece (below V8's large-object size). */
const STREAMED_PIECE_CHARACTERS = 32 * 1024;

/**
 * The same bytes as `ConversationEncoder.encode`, made as they are consumed, in pieces of
 * about 32K characters, and nothing is kept: a large conversation is written without a second
 * copy of it in memory, and the text of each piece is short-lived garbage for the engine's
 * young generation (docs/archive.md, "Memory"). Each value is encoded whenever the pieces are
 * walked.
 */
export function* streamedPieces(conversation: SavedConversation): Generator<Buffer> {
  const record = conversation as unknown as Record<string, unknown>;
  let text = "{";
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const value = record[key];
    if (value === undefined) continue;
    text += `${first ? "" : ","}\n  ${JSON.stringify(key)} : `;
    first = false;
    if (Array.isArray(value)) {
      if (value.length === 0) {
        text += "[]";
        continue;
      }
      text += "[";
      for (let index = 0; index < value.length; index++) {
        const element: unknown = value[index];
        if (element === undefined) canonicalJsonFragment([undefined]); // refuses with the writer's error
        text += (index > 0 ? "," : "") + ELEMENT_INDENT + canonicalJsonFragment(element, 2);
        if (text.length >= STREAMED_PIECE_CHARACTERS) {
          yield Buffer.from(text);
          text = "";
        }
      }
      text += "\n  ]";
    } else if (value instanceof Map) {
      text += mapText(value as Map<unknown, unknown>);
    } else {
      text += canonicalJsonFragment(value, 1);
    }
  }
  yield Buffer.from(first ? "{}\n" : `${text}\n}\n`);
}

/** A top-level map as `ConversationEncoder` writes it (entries sorted by key). */
function mapText(map: Map<unknown, unknown>): string {
  const entries: [string, unknown][] = [];
  for (const [key, value] of map) {
    if (typeof key !== "string") {
      canonicalJsonFragment(new Map([[key, value]])); // refuses with the writer's error
      continue;
    }
    if (value !== undefined) entries.push([key, value]);
  }
  if (entries.length === 0) return "{}";
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parts = entries.map(
    ([key, value]) =>
      `${ELEMENT_INDENT}${JSON.stringify(key)} : ${canonicalJsonFragment(value, 2)}`,
  );
  return `{${parts.join(",")}\n  }`;
}

/** True when two piece lists hold the same bytes (pieces compared by identity first). */
export function samePieces(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    const left = a[index] as Buffer;
    const right = b[index] as Buffer;
    if (left !== right && !left.equals(right)) return false;
  }
  return true;
}

/** True when the pieces, concatenated, equal `bytes`. */
export function piecesEqualBytes(pieces: readonly Buffer[], bytes: Uint8Array): boolean {
  let offset = 0;
  for (const piece of pieces) {
    const end = offset + piece.length;
    if (end > bytes.length) return false;
    if (Buffer.compare(piece, bytes.subarray(offset, end)) !== 0) return false;
    offset = end;
  }
  return offset === bytes.length;
}

export function piecesLength(pieces: readonly Buffer[]): number {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  return length;
}
