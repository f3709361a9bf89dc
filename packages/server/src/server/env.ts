import { VerbatimError } from "verbatim-llm/core";
import {
  codecOf,
  COMPRESSIONS,
  type Compression,
} from "../gateway/recording/bodies/compression.js";

/**
 * A whole number ≥ 0 from an environment variable: undefined when unset or empty; a clear
 * error naming the variable when it is anything else (the server does not start on a typo).
 */
export function wholeNumberFromEnv(
  env: Readonly<Record<string, string | undefined>> | undefined,
  name: string,
): number | undefined {
  const text = env?.[name];
  if (text === undefined || text.trim() === "") return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new VerbatimError("invalid_argument", `${name} must be a whole number, not "${text}"`, {
      where: name,
      hint: `Set ${name} to a whole number of 0 or more, or unset it for the default (docs/server/README.md)`,
    });
  }
  return value;
}

/**
 * A switch from an environment variable: `on`/`off` (also `true`/`false`, `1`/`0`, any case);
 * undefined when unset or empty; a clear error naming the variable for anything else.
 */
export function switchFromEnv(
  env: Readonly<Record<string, string | undefined>> | undefined,
  name: string,
): boolean | undefined {
  const text = env?.[name];
  if (text === undefined || text.trim() === "") return undefined;
  const value = text.trim().toLowerCase();
  if (["on", "true", "1"].includes(value)) return true;
  if (["off", "false", "0"].includes(value)) return false;
  throw new VerbatimError("invalid_argument", `${name} must be on or off, not "${text}"`, {
    where: name,
    hint: `Set ${name} to on or off, or unset it for the default (docs/server/README.md)`,
  });
}

/**
 * One of a few words from an environment variable (any case): undefined when unset or empty; a
 * clear error naming the variable and the words for anything else.
 */
export function choiceFromEnv<Choice extends string>(
  env: Readonly<Record<string, string | undefined>> | undefined,
  name: string,
  choices: readonly Choice[],
): Choice | undefined {
  const text = env?.[name];
  if (text === undefined || text.trim() === "") return undefined;
  const value = text.trim().toLowerCase();
  const chosen = choices.find((choice) => choice === value);
  if (chosen !== undefined) return chosen;
  const words = choices.join(", ");
  throw new VerbatimError("invalid_argument", `${name} must be one of ${words}, not "${text}"`, {
    where: name,
    hint: `Set ${name} to one of ${words}, or unset it for the default (docs/server/README.md)`,
  });
}

/**
 * VERBATIM_RECORD_COMPRESSION: how recorded bodies' new pieces are compressed (default `auto`);
 * a codec this Node lacks (zstd before 22.15) stops the start with a clear error.
 */
export function recordCompressionFromEnv(
  env: Readonly<Record<string, string | undefined>> | undefined,
): Compression {
  const compression = choiceFromEnv(env, "VERBATIM_RECORD_COMPRESSION", COMPRESSIONS) ?? "auto";
  codecOf(compression);
  return compression;
}
