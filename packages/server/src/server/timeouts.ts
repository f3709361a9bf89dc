import { VerbatimError } from "verbatim-llm/core";
import { wholeNumberFromEnv } from "./env.js";

/**
 * How long the server waits for a client (docs/server/README.md, "Timeouts"). A request whose headers
 * or body are late is answered 408 `request_timeout` and its connection closed; a kept-alive
 * connection with no request is closed after the idle timeout. Waiting on the upstream is not
 * limited here (VERBATIM_UPSTREAM_TIMEOUT_MS): once a request has arrived, the server takes the
 * time it needs to answer.
 */
export interface ServerTimeouts {
  /** From a connection's first byte (or the end of its previous reply) to the end of the headers. */
  readonly headersMs: number;
  /** From the first byte of a request to the last byte of its body (headers included). */
  readonly bodyMs: number;
  /** A kept-alive connection with no request in it is closed after this long. */
  readonly idleMs: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  headersMs: 10_000,
  bodyMs: 60_000,
  // Above the 60 s idle timeout of common load balancers (AWS ALB), so that the server never
  // closes a connection the balancer is about to reuse.
  idleMs: 65_000,
};

/** How often connections are checked against the header and body timeouts. */
export function checkingIntervalMs(timeouts: ServerTimeouts): number {
  return Math.max(
    50,
    Math.min(1_000, Math.floor(Math.min(timeouts.headersMs, timeouts.bodyMs) / 4)),
  );
}

const optionNames = {
  headersMs: "timeouts.headersMs",
  bodyMs: "timeouts.bodyMs",
  idleMs: "timeouts.idleMs",
};

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new VerbatimError(
      "invalid_argument",
      `${name} must be a whole number of milliseconds of 1 or more, not ${value}`,
      {
        where: name,
        hint: `Set ${name} to a number of milliseconds of 1 or more, or unset it for the default (docs/server/README.md, Timeouts)`,
      },
    );
  }
  return value;
}

/** Checks a set of timeouts: each ≥ 1 ms, and the headers arrive no later than the body. */
export function checkTimeouts(timeouts: ServerTimeouts, names = optionNames): ServerTimeouts {
  positive(names.headersMs, timeouts.headersMs);
  positive(names.bodyMs, timeouts.bodyMs);
  positive(names.idleMs, timeouts.idleMs);
  if (timeouts.headersMs > timeouts.bodyMs) {
    throw new VerbatimError(
      "invalid_argument",
      `${names.headersMs} (${timeouts.headersMs}) must not be longer than ${names.bodyMs} (${timeouts.bodyMs}): the body timeout counts from the request's first byte, headers included`,
      {
        where: names.headersMs,
        hint: `Lower ${names.headersMs} or raise ${names.bodyMs} (docs/server/README.md, Timeouts)`,
      },
    );
  }
  return timeouts;
}

const envNames = {
  headersMs: "VERBATIM_HEADERS_TIMEOUT_MS",
  bodyMs: "VERBATIM_BODY_TIMEOUT_MS",
  idleMs: "VERBATIM_IDLE_TIMEOUT_MS",
};

/** The timeouts of `verbatim serve`: each VERBATIM_*_TIMEOUT_MS, else the default. */
export function timeoutsFromEnv(
  env: Readonly<Record<string, string | undefined>> | undefined,
): ServerTimeouts {
  return checkTimeouts(
    {
      headersMs: wholeNumberFromEnv(env, envNames.headersMs) ?? DEFAULT_TIMEOUTS.headersMs,
      bodyMs: wholeNumberFromEnv(env, envNames.bodyMs) ?? DEFAULT_TIMEOUTS.bodyMs,
      idleMs: wholeNumberFromEnv(env, envNames.idleMs) ?? DEFAULT_TIMEOUTS.idleMs,
    },
    envNames,
  );
}
