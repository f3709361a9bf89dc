import type { TrajectoryItem } from "./items.js";

/**
 * The sanitizer that runs on every appended item (SPEC B7): it replaces secrets in every string
 * of the item, however deeply nested, and records `redacted: true` on an item it changed.
 * Rules are configurable; the defaults cover the common API keys and tokens and leave
 * look-alikes (too short, wrong alphabet, part of a longer word) alone.
 */
export interface SecretRule {
  /** A short name, shown in the replacement: `[redacted:<name>]`. */
  readonly name: string;
  /** Matches the secret; must have the `g` flag. The part in group `secret` is replaced when
   *  the pattern names one, else the whole match. */
  readonly pattern: RegExp;
  /** Optional: substrings one of which every match contains; text holding none of them is not
   *  searched with the pattern (a fast path, never a change in what is found). */
  readonly anchors?: readonly string[];
}

/** Not preceded or followed by a character that would make the match part of a longer token. */
const before = "(?<![A-Za-z0-9_\\-])";
const after = "(?![A-Za-z0-9_\\-])";

/** The secret patterns the default sanitizer redacts. */
export const defaultSecretRules: readonly SecretRule[] = [
  {
    name: "anthropic_api_key",
    anchors: ["sk-ant-"],
    pattern: new RegExp(`${before}sk-ant-[a-z]{2,10}\\d{2}-[A-Za-z0-9_\\-]{32,}${after}`, "g"),
  },
  {
    name: "openai_api_key",
    anchors: ["sk-"],
    pattern: new RegExp(
      `${before}sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\\-]{32,}${after}|${before}sk-[A-Za-z0-9]{48}${after}`,
      "g",
    ),
  },
  {
    name: "bearer_token",
    anchors: ["earer"],
    pattern:
      /(?<![A-Za-z0-9])[Bb]earer\s+(?<secret>[A-Za-z0-9\-._~+/]{16,}=*)(?![A-Za-z0-9\-._~+/=])/g,
  },
  {
    name: "aws_access_key_id",
    anchors: ["AKIA", "ASIA"],
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
  },
  {
    name: "github_token",
    anchors: ["gh", "github_pat_"],
    pattern: new RegExp(
      `${before}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})${after}`,
      "g",
    ),
  },
  {
    name: "jwt",
    anchors: ["eyJ"],
    pattern: new RegExp(
      `${before}eyJ[A-Za-z0-9_\\-]{8,}\\.eyJ[A-Za-z0-9_\\-]{8,}\\.[A-Za-z0-9_\\-]{16,}${after}`,
      "g",
    ),
  },
];

export interface SanitizerOptions {
  /** The rules to apply (default `defaultSecretRules`). */
  readonly rules?: readonly SecretRule[];
  /** Rules applied after `rules`. */
  readonly extraRules?: readonly SecretRule[];
  /** The text that replaces a secret (default `[redacted:<rule name>]`). */
  readonly replacement?: (rule: SecretRule) => string;
}

export interface SanitizeResult<T> {
  readonly value: T;
  /** True when at least one secret was replaced. */
  readonly redacted: boolean;
}

export interface Sanitizer {
  /** Replaces secrets in one string. */
  sanitizeText(text: string): SanitizeResult<string>;
  /** Replaces secrets in every string of a JSON value (object keys are left as they are). */
  sanitizeValue<T>(value: T): SanitizeResult<T>;
  /** Sanitizes an item; a changed item records `redacted: true` (an unchanged one keeps its
   *  own `redacted` field as it was). */
  sanitizeItem(item: TrajectoryItem): SanitizeResult<TrajectoryItem>;
}

export function createSanitizer(options: SanitizerOptions = {}): Sanitizer {
  const rules = [...(options.rules ?? defaultSecretRules), ...(options.extraRules ?? [])];
  for (const rule of rules) {
    if (!rule.pattern.global) {
      throw new TypeError(`secret rule ${rule.name}: the pattern needs the g flag`);
    }
  }
  const replacementOf = options.replacement ?? ((rule: SecretRule) => `[redacted:${rule.name}]`);

  function sanitizeText(text: string): SanitizeResult<string> {
    let out = text;
    let redacted = false;
    for (const rule of rules) {
      if (rule.anchors !== undefined && !rule.anchors.some((anchor) => out.includes(anchor))) {
        continue;
      }
      const replacement = replacementOf(rule);
      out = out.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
        redacted = true;
        const groups = rest[rest.length - 1];
        const secret =
          typeof groups === "object" && groups !== null
            ? (groups as Record<string, string | undefined>)["secret"]
            : undefined;
        return secret === undefined ? replacement : match.replace(secret, replacement);
      });
    }
    return { value: out, redacted };
  }

  /** Copy on write: a value without secrets comes back as the same object. */
  function walk(value: unknown, found: { redacted: boolean }): unknown {
    if (typeof value === "string") {
      const result = sanitizeText(value);
      if (!result.redacted) return value;
      found.redacted = true;
      return result.value;
    }
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((entry: unknown, index) => {
        const next = walk(entry, found);
        if (next !== entry) (copy ??= [...value])[index] = next;
      });
      return copy ?? value;
    }
    if (typeof value === "object" && value !== null) {
      let copy: Record<string, unknown> | undefined;
      for (const [key, entry] of Object.entries(value)) {
        const next = walk(entry, found);
        if (next === entry) continue;
        copy ??= copyObject(value);
        // defineProperty keeps `__proto__` a plain key.
        Object.defineProperty(copy, key, {
          value: next,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return copy ?? value;
    }
    return value;
  }

  function sanitizeValue<T>(value: T): SanitizeResult<T> {
    const found = { redacted: false };
    const out = walk(value, found) as T;
    return { value: out, redacted: found.redacted };
  }

  return {
    sanitizeText,
    sanitizeValue,
    sanitizeItem(item) {
      const result = sanitizeValue(item);
      return result.redacted
        ? { value: { ...result.value, redacted: true }, redacted: true }
        : { value: item, redacted: false };
    },
  };
}

/** The sanitizer with the default rules. */
export const defaultSanitizer: Sanitizer = createSanitizer();

function copyObject(value: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    Object.defineProperty(out, key, {
      value: entry,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
