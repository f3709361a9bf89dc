import { isVerbatimError, VerbatimError, type ErrorCode } from "verbatim-llm/core";
import type { DatabaseLocation } from "../../../store/location.js";
import type { ConversationPageRequest } from "../conversation-page.js";
import type { JobPageRequest } from "../job-page.js";

/** What the console's worker thread opens: the store's location and its settings. */
export interface PageWorkerSettings {
  readonly location: DatabaseLocation;
  /** PostgreSQL: named prepared statements (off for a pooler that cannot keep them). */
  readonly preparedStatements: boolean;
  /** PostgreSQL: connections of the worker's pool (default 2). */
  readonly poolSize?: number;
  /** PostgreSQL behind a pooler in transaction mode (store/database.ts). */
  readonly pooler?: "transaction";
  /** Bytes of parsed messages the worker's own message cache keeps. */
  readonly cacheBytes: number;
}

/** A page to build. */
export type PageJob =
  | { readonly kind: "conversation"; readonly request: ConversationPageRequest }
  | { readonly kind: "job"; readonly request: JobPageRequest };

/**
 * Main thread → worker: a page to build, the order to open the store now (when the server
 * starts listening, so the first page does not wait for it), or to close it and end.
 */
export type ToWorker =
  | { readonly id: number; readonly job: PageJob }
  | { readonly open: true }
  | { readonly close: true };

/** An error thrown in the worker, as sent back: enough to answer as if thrown on the main thread. */
export interface SentError {
  readonly verbatim: boolean;
  readonly code: string | undefined;
  readonly message: string;
  readonly where: string | undefined;
  readonly hint: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly stack: string | undefined;
}

/** Worker → main thread: a page's UTF-8 JSON reply (its memory moved, not copied), or why not. */
export type FromWorker =
  | { readonly id: number; readonly bytes: ArrayBuffer }
  | { readonly id: number; readonly error: SentError };

/** Details that can be sent to another thread (structured clone), or none. */
function cloneableDetails(
  details: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> | undefined {
  try {
    return details === undefined ? undefined : structuredClone(details);
  } catch {
    return undefined;
  }
}

export function errorToSend(error: unknown): SentError {
  const stack = error instanceof Error ? error.stack : undefined;
  if (isVerbatimError(error)) {
    return {
      verbatim: true,
      code: error.code,
      message: error.message,
      where: error.where,
      hint: error.hint,
      details: cloneableDetails(error.details),
      stack,
    };
  }
  const code =
    typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
  return {
    verbatim: false,
    code,
    message: error instanceof Error ? error.message : String(error),
    where: undefined,
    hint: undefined,
    details: undefined,
    stack,
  };
}

/**
 * The error to throw on the main thread: a VerbatimError as it was (same code, message, where,
 * hint and details, so the same reply), anything else as the error it was, whose reply is the
 * one of any unexpected error (500 internal_error).
 */
export function errorReceived(sent: SentError): Error {
  if (sent.verbatim && sent.code !== undefined) {
    return new VerbatimError(sent.code as ErrorCode, sent.message, {
      ...(sent.where === undefined ? {} : { where: sent.where }),
      ...(sent.hint === undefined ? {} : { hint: sent.hint }),
      ...(sent.details === undefined ? {} : { details: sent.details }),
    });
  }
  const error = new Error(sent.message);
  if (sent.stack !== undefined) error.stack = sent.stack;
  return error;
}
