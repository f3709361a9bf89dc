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
 * The brand every VerbatimError carries, under a registry symbol: two copies of verbatim in one
 * process (a duplicate install, a bundled copy) share it, so their errors recognise each other.
 */
const VERBATIM_ERROR_BRAND: unique symbol = Symbol.for("verbatim.VerbatimError");

/**
 * The one error class of verbatim. `code` is stable and documented in docs/errors.md; the
 * message says what went wrong, `where` says where, `hint` says what to do. `instanceof` and
 * `isVerbatimError` recognise errors of every copy of verbatim loaded in the process.
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

  /** True for a VerbatimError of any copy of verbatim (by brand, not by prototype chain). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== VerbatimError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return isVerbatimError(value);
  }

  /** One line for a terminal: `message (at where). hint` */
  describe(): string {
    let text = this.message;
    if (this.where !== undefined) text += ` (at ${this.where})`;
    if (this.hint !== undefined) text += `. ${this.hint}`;
    return text;
  }
}

Object.defineProperty(VerbatimError.prototype, VERBATIM_ERROR_BRAND, { value: true });

/**
 * True when `value` is a VerbatimError, from this copy of verbatim or another one loaded in the
 * same process (it reads a `Symbol.for` brand, so duplicate installs agree).
 */
export function isVerbatimError(value: unknown): value is VerbatimError {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { readonly [VERBATIM_ERROR_BRAND]?: unknown })[VERBATIM_ERROR_BRAND] === true
  );
}
