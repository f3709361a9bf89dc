import type { ErrorCode } from "./error-codes.js";

export interface VerbatimErrorOptions {
  /** Where the problem is: a file path, a JSON path, a field name. */
  readonly where?: string;
  /** What the user can do about it. */
  readonly hint?: string;
  readonly cause?: unknown;
  /** Structured facts for machine readers (kept small; never secrets). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * The one error class of verbatim. `code` is stable and documented in docs/errors.md; the
 * message says what went wrong, `where` says where, `hint` says what to do.
 */
export class VerbatimError extends Error {
  override readonly name = "VerbatimError";
  readonly code: ErrorCode;
  readonly where: string | undefined;
  readonly hint: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options: VerbatimErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.where = options.where;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** One line for a terminal: `message (at where). hint` */
  describe(): string {
    let text = this.message;
    if (this.where !== undefined) text += ` (at ${this.where})`;
    if (this.hint !== undefined) text += `. ${this.hint}`;
    return text;
  }
}

export function isVerbatimError(value: unknown): value is VerbatimError {
  return value instanceof VerbatimError;
}
