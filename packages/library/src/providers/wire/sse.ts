/**
 * Server-sent events: a decoder that turns chunks of bytes into events (the `event:` name and
 * the `data:` lines joined by LF), per the WHATWG EventSource rules that providers follow.
 */
import { VerbatimError } from "../../core/errors.js";
import { safeParseStrictJson, type JsonValue } from "../../core/strict-json.js";

/** One server-sent event: its `event:` name (if any) and its joined `data:` lines. */
export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/** Decodes a server-sent-event byte stream into events, chunk by chunk. */
export class SseDecoder {
  private readonly decoder = new TextDecoder("utf-8");
  private buffer = "";
  private eventName: string | undefined;
  private data: string[] = [];

  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    return this.drainLines(false);
  }

  /** Ends the stream; returns the last event if it was not followed by a blank line. */
  end(): SseEvent[] {
    this.buffer += this.decoder.decode();
    const events = this.drainLines(true);
    const last = this.dispatch();
    if (last !== undefined) events.push(last);
    return events;
  }

  private drainLines(final: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    const text = this.buffer;
    for (;;) {
      let end = -1;
      let next = -1;
      for (let index = start; index < text.length; index++) {
        const code = text.charCodeAt(index);
        if (code === 0x0a) {
          end = index;
          next = index + 1;
          break;
        }
        if (code === 0x0d) {
          if (index + 1 >= text.length && !final) break;
          end = index;
          next = text.charCodeAt(index + 1) === 0x0a ? index + 2 : index + 1;
          break;
        }
      }
      if (end < 0) break;
      const event = this.line(text.slice(start, end));
      if (event !== undefined) events.push(event);
      start = next;
    }
    this.buffer = text.slice(start);
    if (final && this.buffer !== "") {
      const event = this.line(this.buffer);
      if (event !== undefined) events.push(event);
      this.buffer = "";
    }
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.eventName = value;
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    if (this.data.length === 0) {
      this.eventName = undefined;
      return undefined;
    }
    const event: SseEvent =
      this.eventName === undefined
        ? { data: this.data.join("\n") }
        : { event: this.eventName, data: this.data.join("\n") };
    this.data = [];
    this.eventName = undefined;
    return event;
  }
}

/** Parses provider JSON (prototype-safe); a syntax error is a provider_response_invalid. */
export function parseProviderJson(text: string, what: string): JsonValue {
  const parsed = safeParseStrictJson(text);
  if (!parsed.ok) {
    throw new VerbatimError(
      "provider_response_invalid",
      `${what} is not valid JSON: ${parsed.problem.message}`,
      { where: `${what} line ${parsed.problem.line} column ${parsed.problem.column}` },
    );
  }
  return parsed.value;
}
