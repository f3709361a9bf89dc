import { isUtf8 } from "node:buffer";
import { safeParseStrictJson } from "verbatim-llm/core";
import { elementEnds, membersBefore, skipWhitespace } from "./json-members.js";
import { RecentPerSubject } from "./recent-per-subject.js";

/** A request parsed before: what of it the session's next request can take over. */
interface ParsedRequest {
  readonly bytes: Buffer;
  /** The member holding the turns: `messages`, Gemini's `contents`. */
  readonly key: string;
  /** The members of its object before `messages`, in order (their values as parsed). */
  readonly head: readonly (readonly [string, unknown])[];
  readonly messages: readonly unknown[];
  /** The byte offset just past each message of `messages`. */
  readonly ends: readonly number[];
  /**
   * Where the `messages` array closes (its `]`), and the members after it as parsed: a next
   * request whose bytes from its own `]` on are the same (the system prompt, the tools) takes
   * them as they are. Undefined when not known.
   */
  readonly after?: {
    readonly close: number;
    readonly members: readonly (readonly [string, unknown])[];
  };
}

const COMMA = 0x2c;
const CLOSE_ARRAY = 0x5d;
/** Bytes compared at a time looking for where two requests part. */
const BLOCK = 4096;

/**
 * The last few request bodies of each subject the pass-through routes parsed, with their values,
 * so that a session's next request, which repeats its previous one and adds a turn, is parsed
 * from where the two part (docs/server/performance.md, "Recording storage"). What it gives is
 * the value the strict parser gives for the whole body (its messages before the new ones are
 * the previous request's values, shared, never changed by anyone reading them): a body whose
 * tail does not read as JSON, or that is not one object with a `messages` array (Gemini's
 * `contents`: the member is the caller's `key`), is parsed
 * whole by the caller, which gets the strict parser's own error. Bounded in bodies per subject
 * and in bytes overall (least recently used subject out first).
 */
export class RecentRequests {
  readonly #recent: RecentPerSubject<ParsedRequest>;

  constructor(
    private readonly maxBytes: number = 32 * 1024 * 1024,
    perSubject: number = 4,
    /** Smaller bodies are parsed whole: there is little to save. */
    readonly minBytes: number = 16 * 1024,
  ) {
    this.#recent = new RecentPerSubject(maxBytes, perSubject);
  }

  /** What it holds now (bodies and their bytes). */
  get size(): { readonly bodies: number; readonly bytes: number } {
    return this.#recent.size;
  }

  /**
   * The body's value when it continues one of the subject's recent requests (the same bytes up
   * to the end of one of its messages at least), read from there on only; undefined when it
   * does not, or when its tail is not JSON as expected (the caller parses it whole and calls
   * `remember`).
   */
  continued(
    subjectUid: string,
    bytes: Buffer,
    key: string = "messages",
  ): Record<string, unknown> | undefined {
    if (bytes.length < this.minBytes) return undefined;
    let base: ParsedRequest | undefined;
    let count = 0;
    for (const candidate of this.#recent.of(subjectUid)) {
      if (candidate.key !== key) continue;
      const shared = sharedHead(candidate.bytes, bytes);
      const whole = messagesWithin(candidate.ends, shared);
      if (whole > count) {
        base = candidate;
        count = whole;
      }
    }
    if (base === undefined) return undefined;
    const read = readTail(base, count, bytes);
    if (read === undefined) return undefined;
    this.#recent.add(subjectUid, read.request, (kept) => kept === base);
    return read.value;
  }

  /** Keeps a body the caller parsed whole (`value`, as the strict parser gave it). */
  remember(subjectUid: string, bytes: Buffer, value: unknown, key: string = "messages"): void {
    if (bytes.length < this.minBytes || bytes.length > this.maxBytes / 4) return;
    const object =
      typeof value === "object" && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
    const messages = object?.[key];
    if (object === undefined || !Array.isArray(messages)) return;
    const before = membersBefore(bytes, key);
    if (before === undefined) return;
    const ends = elementEnds(bytes, before.valueStart);
    if (ends.length !== messages.length) return;
    const head = before.names.map((name) => [name, object[name]] as const);
    const after = membersAfter(object, key, before.names, bytes, ends, before.valueStart);
    this.#recent.add(subjectUid, {
      bytes,
      key,
      head,
      messages,
      ends,
      ...(after === undefined ? {} : { after }),
    });
  }

  /** Forgets a subject's bodies. */
  forget(subjectUid: string): void {
    this.#recent.forget(subjectUid);
  }
}

/** How many bytes two bodies begin with alike. */
export function sharedHead(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  let at = 0;
  while (at + BLOCK <= length && a.subarray(at, at + BLOCK).equals(b.subarray(at, at + BLOCK))) {
    at += BLOCK;
  }
  while (at < length && a[at] === b[at]) at++;
  return at;
}

/** How many of the messages end within the first `bytes` bytes. */
function messagesWithin(ends: readonly number[], bytes: number): number {
  let low = 0;
  let high = ends.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((ends[middle] as number) <= bytes) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The value of `bytes`, which begin as `base` does up to the end of its message `count - 1`:
 * its first members and messages are the base's, the rest is parsed as the members of an
 * object whose `messages` array holds the messages after those (so the strict parser checks
 * every byte after the shared ones, repeated keys included).
 */
function readTail(
  base: ParsedRequest,
  count: number,
  bytes: Buffer,
): { value: Record<string, unknown>; request: ParsedRequest } | undefined {
  const end = base.ends[count - 1] as number;
  const next = skipWhitespace(bytes, end);
  let from: number;
  if (bytes[next] === COMMA) {
    // `[a, ]` is not JSON, though `[` and what follows the comma would be.
    if (bytes[skipWhitespace(bytes, next + 1)] === CLOSE_ARRAY) return undefined;
    from = next + 1;
  } else if (bytes[next] === CLOSE_ARRAY) {
    from = next;
  } else {
    return undefined;
  }
  const reused = sameAfter(base, bytes, from, next);
  if (reused !== undefined) return withMembers(base, count, bytes, reused);
  const tail = bytes.subarray(from);
  // The shared bytes are the base's (UTF-8), and they end with an ASCII byte.
  if (!isUtf8(tail)) return undefined;
  const parsed = safeParseStrictJson(`{${JSON.stringify(base.key)}:[${tail.toString("utf8")}`);
  if (!parsed.ok) return undefined;
  const rest = parsed.value as Record<string, unknown>;
  const members = Object.keys(rest)
    .filter((name) => name !== base.key)
    .map((name) => [name, rest[name]] as const);
  // A key before `messages` repeated after it: the whole body's parse names the problem.
  if (members.some(([name]) => base.head.some(([before]) => before === name))) return undefined;
  const added = rest[base.key] as unknown[];
  const ends = added.length > 0 ? elementEnds(bytes, from - 1) : [];
  const close = skipWhitespace(bytes, ends[ends.length - 1] ?? from);
  return withMembers(base, count, bytes, {
    added,
    ends,
    after: bytes[close] === CLOSE_ARRAY ? { close, members } : undefined,
  });
}

/** The parts of a request read after the messages it shares with its base. */
interface TailRead {
  readonly added: readonly unknown[];
  /** The byte offset just past each added message. */
  readonly ends: readonly number[];
  readonly after: ParsedRequest["after"];
}

/**
 * The tail of `bytes` when its bytes from the `messages` array's `]` on are the base's: only the
 * added messages are parsed (as an array of their own: every new byte is still checked), the
 * members after the array are the base's values. Undefined when the two differ there.
 */
function sameAfter(
  base: ParsedRequest,
  bytes: Buffer,
  from: number,
  next: number,
): TailRead | undefined {
  if (base.after === undefined) return undefined;
  const ends = bytes[next] === CLOSE_ARRAY ? [] : elementEnds(bytes, from - 1);
  const close = skipWhitespace(bytes, ends[ends.length - 1] ?? next);
  if (bytes[close] !== CLOSE_ARRAY) return undefined;
  const theirs = base.after.close;
  if (bytes.length - close !== base.bytes.length - theirs) return undefined;
  if (!bytes.subarray(close).equals(base.bytes.subarray(theirs))) return undefined;
  const region = bytes.subarray(from, close);
  if (!isUtf8(region)) return undefined;
  const parsed = safeParseStrictJson(`[${region.toString("utf8")}]`);
  if (!parsed.ok || !Array.isArray(parsed.value) || parsed.value.length !== ends.length) {
    return undefined;
  }
  return { added: parsed.value, ends, after: { close, members: base.after.members } };
}

/** The request's value and what is kept of it: the base's members and first messages, and `read`. */
function withMembers(
  base: ParsedRequest,
  count: number,
  bytes: Buffer,
  read: TailRead,
): { value: Record<string, unknown>; request: ParsedRequest } | undefined {
  const value: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, member] of base.head) value[name] = member;
  const messages = base.messages.slice(0, count);
  for (const message of read.added) messages.push(message);
  value[base.key] = messages;
  for (const [name, member] of read.after?.members ?? []) value[name] = member;
  const ends = base.ends.slice(0, count);
  for (const at of read.ends) ends.push(at);
  if (ends.length !== messages.length) return undefined;
  const request: ParsedRequest = {
    bytes,
    key: base.key,
    head: base.head,
    messages,
    ends,
    ...(read.after === undefined ? {} : { after: read.after }),
  };
  return { value, request };
}

/**
 * Where a parsed body's `messages` array closes, and its members after it (those not before it
 * and not `messages`, in the parsed value's order).
 */
function membersAfter(
  object: Record<string, unknown>,
  key: string,
  before: readonly string[],
  bytes: Buffer,
  ends: readonly number[],
  valueStart: number,
): ParsedRequest["after"] {
  const close = skipWhitespace(
    bytes,
    ends[ends.length - 1] ?? skipWhitespace(bytes, valueStart + 1),
  );
  if (bytes[close] !== CLOSE_ARRAY) return undefined;
  const members = Object.keys(object)
    .filter((name) => name !== key && !before.includes(name))
    .map((name) => [name, object[name]] as const);
  return { close, members };
}
