import { isWellFormedText } from "./bytes.js";

/**
 * The one rule for every string a server stores, on every route and in every field: ids, keys,
 * names, texts, metadata keys and values, and every string and object key at any depth of a
 * JSON value (tool parameters, job results, trajectory items). A stored string
 *
 * - is well-formed Unicode: no lone surrogate (UTF-8, SQLite and PostgreSQL cannot hold one;
 *   two different lone surrogates would come back as the same U+FFFD);
 * - holds no U+0000 (NUL): PostgreSQL text cannot hold it, and SQLite cuts some reads at it;
 * - and, as an object key, is not `__proto__`: a JavaScript object cannot keep it as data
 *   (an assignment sets the prototype), so it would be dropped without a word.
 *
 * What breaks the rule is refused before anything is written, never repaired or dropped
 * silently. Text that arrives from a model (not from a caller) is repaired instead with
 * `repairStoredText`, so an answer is never lost to the rule. Pure: no I/O, usable anywhere.
 */

/** Why a string breaks the stored-text rule: a lone surrogate, a NUL or a `__proto__` key. */
export type StoredTextProblem = "lone_surrogate" | "nul" | "prototype_key";

/** Where a value breaks the stored-text rule and why (lone surrogate, NUL, __proto__ key). */
export interface StoredTextFault {
  /** Where in the value: object keys and array indexes from the top. */
  readonly path: readonly (string | number)[];
  readonly problem: StoredTextProblem;
  /** For a lone surrogate or a NUL: its index in the string (UTF-16 code units). */
  readonly index?: number;
  /** True when the fault is in an object key rather than in a string value. */
  readonly inKey: boolean;
}

const PROTOTYPE_KEY = "__proto__";

/** The first problem of one string, or undefined when the string may be stored. */
export function storedTextProblem(
  text: string,
): { readonly problem: "lone_surrogate" | "nul"; readonly index: number } | undefined {
  const nul = text.indexOf("\u0000");
  if (isWellFormedText(text)) return nul < 0 ? undefined : { problem: "nul", index: nul };
  const surrogate = loneSurrogateIndex(text);
  if (nul >= 0 && nul < surrogate) return { problem: "nul", index: nul };
  return { problem: "lone_surrogate", index: surrogate };
}

/** True when the string may be stored: well-formed Unicode without NUL. */
export function isStorableText(text: string): boolean {
  return isWellFormedText(text) && !text.includes("\u0000");
}

function loneSurrogateIndex(text: string): number {
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        index++;
        continue;
      }
      return index;
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return index;
  }
  return -1;
}

/**
 * The first string of `value` (a string, or any JSON value: arrays and plain objects are
 * walked, keys included) that breaks the rule, or undefined when all of it may be stored.
 * Numbers, booleans and null pass; so does anything else (other checks refuse other types).
 */
export function findStoredTextFault(value: unknown): StoredTextFault | undefined {
  // Each entry knows its parent, so a path is built only for the fault (a walk that copied
  // paths would cost the depth at every node).
  interface Entry {
    readonly value: unknown;
    readonly parent: Entry | undefined;
    readonly segment: string | number | undefined;
  }
  const pathOf = (entry: Entry | undefined, last?: string): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let at = entry; at !== undefined && at.segment !== undefined; at = at.parent) {
      path.push(at.segment);
    }
    return path.reverse();
  };
  const stack: Entry[] = [{ value, parent: undefined, segment: undefined }];
  // Each array or object is walked once: a value shared in two places, or a cycle a library
  // caller passed (which JSON refuses later), costs no second walk and never loops.
  const seen = new Set<object>();
  while (stack.length > 0) {
    const entry = stack.pop();
    if (entry === undefined) break;
    const current = entry.value;
    if (typeof current === "string") {
      const found = storedTextProblem(current);
      if (found !== undefined) return { path: pathOf(entry), ...found, inKey: false };
      continue;
    }
    if (typeof current !== "object" || current === null || seen.has(current)) continue;
    seen.add(current);
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        stack.push({ value: current[index] as unknown, parent: entry, segment: index });
      }
      continue;
    }
    const keys = Object.keys(current);
    for (const key of keys) {
      if (key === PROTOTYPE_KEY) {
        return { path: pathOf(entry, key), problem: "prototype_key", inKey: true };
      }
      const found = storedTextProblem(key);
      if (found !== undefined) return { path: pathOf(entry, key), ...found, inKey: true };
    }
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index] as string;
      stack.push({ value: (current as Record<string, unknown>)[key], parent: entry, segment: key });
    }
  }
  return undefined;
}

/** `where` and the fault's path as one field path: `body.input[0].content`. */
export function storedTextFaultWhere(where: string, fault: StoredTextFault): string {
  let text = where;
  for (const segment of fault.path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${visible(segment)}]`;
  }
  return text;
}

/** A key as a quoted string (NUL and lone surrogates escaped), at most 64 characters. */
function visible(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

/** What the fault is, in a sentence (without where it is: see `storedTextFaultWhere`). */
export function describeStoredTextFault(fault: StoredTextFault): string {
  const what = fault.inKey ? "an object key" : "the text";
  switch (fault.problem) {
    case "prototype_key":
      return 'an object key is "__proto__", which cannot be kept as data (it would be dropped)';
    case "nul":
      return `${what} holds U+0000 (NUL) at character ${fault.index ?? 0}, which cannot be stored`;
    case "lone_surrogate":
      return `${what} holds a lone surrogate at character ${fault.index ?? 0} (not well-formed Unicode), which cannot be stored`;
    default: {
      const never: never = fault.problem;
      return never;
    }
  }
}

/** The hint every refusal of the rule carries. */
export const STORED_TEXT_HINT =
  "Send well-formed Unicode without U+0000 (NUL) and without __proto__ keys (docs/server/README.md, " +
  '"What is stored, and what is refused"); bytes that are not text go in base64; nothing was written';

/**
 * Text from a model or a provider, made storable: each lone surrogate and each NUL becomes
 * U+FFFD. Text that already follows the rule is returned as it is (the same string).
 */
export function repairStoredText(text: string): string {
  if (isStorableText(text)) return text;
  let repaired = "";
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit === 0) {
      repaired += "\ufffd";
    } else if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        repaired += text[index] + (text[index + 1] ?? "");
        index++;
      } else {
        repaired += "\ufffd";
      }
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      repaired += "\ufffd";
    } else {
      repaired += text[index] ?? "";
    }
  }
  return repaired;
}
