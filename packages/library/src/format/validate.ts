import { BASE64_PATTERN } from "../core/bytes.js";
import { MIME_TYPE_PATTERN, SHA256_HEX_PATTERN } from "../history/patterns.js";
import type { SavedConversation } from "./conversation-schema.js";

/**
 * Format 1 checked by hand, without zod: `validateConversation(value)` gives exactly what
 * `conversationSchema.safeParse(value)` gives for an accepted value (the same values, objects
 * copied with their keys in the schema's order, id maps as Maps) and undefined for every value
 * the schema refuses. It says nothing about why: a caller that needs the reason runs the zod
 * decoder (format/decode.ts), which is loaded only then. The element-wise reader
 * (element-decode.ts) checks each element of a file with `elementCheckOf`, so no file it
 * accepts loads zod.
 *
 * The second validator of format 1, kept for start-up time: the zod schemas
 * (conversation-schema.ts, items.ts, history/schema.ts) stay the definition and the
 * explanation. Workload: a short command reading a valid package, `verbatim archive check`:
 * `node bin/run-ts.js bench/cli/run.ts --runs 15 --command "node <the compiled bin>"`, the row
 * `archive check` against the row `import zod only`, the floor of any command that loads zod
 * (1.85× and 2.95× `node -e 0` when measured; the same command with zod loaded, `--command
 * "node --import=zod <the compiled bin>"`, 4.05×). Both validators (`ConversationValidator`)
 * run the one case table test/support/decoder-cases.ts (format/decoders.test.ts), and
 * format/validate.test.ts holds them to the same verdict and output on generated and mutated
 * conversations.
 */
export function validateConversation(value: unknown): SavedConversation | undefined {
  const checked = conversation(value);
  return checked === INVALID ? undefined : (checked as SavedConversation);
}

/**
 * A validator of format 1: a parsed value in, the conversation format 1 makes of it out (values
 * copied, keys in the schema's order, id maps as Maps), or undefined for a value it refuses.
 * `validateConversation` is one; `conversationSchema.safeParse`'s data is the other.
 */
export type ConversationValidator = (value: unknown) => SavedConversation | undefined;

/** Whether format 1 defines a top-level member `key` (`__proto__` and the like are not). */
export function isConversationKey(key: string): boolean {
  return Object.hasOwn(conversationShape, key);
}

/**
 * The check of one element of the top-level array `key` (`history`, `items`, …), for a reader
 * that validates a file one element at a time: the element as `validateConversation` gives it
 * inside the conversation, or undefined when format 1 refuses it. Undefined for a key that is
 * not an array member.
 */
export function elementCheckOf(key: string): ((value: unknown) => unknown) | undefined {
  const field = isConversationKey(key) ? conversationShape[key] : undefined;
  const element = typeof field === "function" ? arrayElements.get(field) : undefined;
  if (element === undefined) return undefined;
  return (value) => {
    const checked = element(value);
    return checked === INVALID ? undefined : checked;
  };
}

const INVALID: unique symbol = Symbol("invalid");
/** A check returns its input's output value (a copy for objects), or INVALID. */
type Check = (value: unknown) => unknown;
interface Optional {
  readonly optional: Check;
}
type Shape = Readonly<Record<string, Check | Optional>>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const string: Check = (value) => (typeof value === "string" ? value : INVALID);
const nonEmptyString: Check = (value) =>
  typeof value === "string" && value.length >= 1 ? value : INVALID;
const boolean: Check = (value) => (typeof value === "boolean" ? value : INVALID);
const nonNegative: Check = (value) =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : INVALID;
const count: Check = (value) =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : INVALID;

function matching(pattern: RegExp): Check {
  return (value) => (typeof value === "string" && pattern.test(value) ? value : INVALID);
}

function oneOf(...allowed: readonly unknown[]): Check {
  const values = new Set(allowed);
  return (value) => (values.has(value) ? value : INVALID);
}

function optional(check: Check): Optional {
  return { optional: (value) => (value === undefined ? undefined : check(value)) };
}

/** The element check of each check made by `array`. */
const arrayElements = new WeakMap<Check, Check>();

function array(element: Check): Check {
  const check: Check = (value) => {
    if (!Array.isArray(value)) return INVALID;
    const output: unknown[] = [];
    for (const entry of value as readonly unknown[]) {
      const checked = element(entry);
      if (checked === INVALID) return INVALID;
      output.push(checked);
    }
    return output;
  };
  arrayElements.set(check, element);
  return check;
}

/** zod's strictObject: every key known, required keys present, output keys in shape order. */
function strictObject(shape: Shape): Check {
  const fields = Object.entries(shape).map(([key, field]) =>
    typeof field === "function"
      ? { key, check: field, required: true }
      : { key, check: field.optional, required: false },
  );
  const known = new Set(Object.keys(shape));
  return (value) => {
    if (!isObject(value)) return INVALID;
    for (const key in value) if (!known.has(key)) return INVALID;
    const output: Record<string, unknown> = {};
    for (const { key, check, required } of fields) {
      if (!(key in value)) {
        if (required) return INVALID;
        continue;
      }
      const checked = check(value[key]);
      if (checked === INVALID) return INVALID;
      output[key] = checked;
    }
    return output;
  };
}

/** zod's discriminatedUnion: the option named by the value of `key`. */
function union(key: string, options: Readonly<Record<string, Check>>): Check {
  const checks = new Map<unknown, Check>(Object.entries(options));
  return (value) => {
    if (!isObject(value)) return INVALID;
    const check = checks.get(value[key]);
    return check === undefined ? INVALID : check(value);
  };
}

/** One strict object per value of `key`: `{ ...before, [key]: value, ...shape }`, in that order. */
function tagged(
  key: string,
  shapes: Readonly<Record<string, Shape>>,
  before: Shape = {},
): Record<string, Check> {
  return Object.fromEntries(
    Object.entries(shapes).map(([name, shape]) => [
      name,
      strictObject({ ...before, [key]: oneOf(name), ...shape }),
    ]),
  );
}

/** format/id-map.ts: a JSON object keyed by arbitrary strings, decoded into a Map. */
function idMap(valueCheck: Check): Check {
  return (value) => {
    let entries: (readonly [unknown, unknown])[];
    if (value instanceof Map) entries = [...(value as Map<unknown, unknown>)];
    else if (isObject(value)) entries = Object.keys(value).map((key) => [key, value[key]]);
    else return INVALID;
    const output = new Map<string, unknown>();
    for (const [key, entry] of entries) {
      const checked = valueCheck(entry);
      if (typeof key !== "string" || checked === INVALID) return INVALID;
      output.set(key, checked);
    }
    return output;
  };
}

/** history/schema.ts's exactlyOne: one of the two keys present, not both. */
function exactlyOne(check: Check, first: string, second: string): Check {
  return (value) => {
    const checked = check(value);
    if (checked === INVALID) return INVALID;
    const record = checked as Record<string, unknown>;
    return Number(first in record) + Number(second in record) === 1 ? checked : INVALID;
  };
}

// history/schema.ts
const sha256 = matching(SHA256_HEX_PATTERN);
const mimeType = matching(MIME_TYPE_PATTERN);
const base64 = matching(BASE64_PATTERN);
const block = union("type", {
  ...tagged("type", {
    text: { text: string },
    image: { sha256, mimeType },
    imageOmitted: { mimeType },
  }),
  toolCall: exactlyOne(
    strictObject({
      type: oneOf("toolCall"),
      id: string,
      name: string,
      arguments: optional(string),
      argumentsBase64: optional(base64),
    }),
    "arguments",
    "argumentsBase64",
  ),
  toolResult: exactlyOne(
    strictObject({
      type: oneOf("toolResult"),
      callID: string,
      toolName: string,
      isError: boolean,
      content: optional(string),
      contentBase64: optional(base64),
    }),
    "content",
    "contentBase64",
  ),
});
const message = strictObject({
  role: oneOf("user", "assistant", "tool"),
  content: array(block),
});

// format/items.ts: the common fields come first in every item's shape.
const citation = strictObject({
  url: string,
  title: optional(string),
  citedText: optional(string),
});
const common: Shape = {
  id: nonEmptyString,
  detail: optional(string),
  citations: optional(array(citation)),
};
const item = union(
  "type",
  tagged(
    "type",
    {
      user: { text: string, hasImage: optional(boolean) },
      assistant: { text: string },
      thinking: { text: string },
      tool: {
        name: string,
        status: oneOf("running", "succeeded", "failed", "cancelled", "denied"),
        callID: optional(string),
        statusText: optional(string),
        summary: optional(string),
      },
      notice: { kind: string, text: string, action: optional(string) },
      failure: { message: string },
      questions: {
        questions: array(
          strictObject({
            text: string,
            options: optional(array(string)),
            answer: optional(string),
          }),
        ),
      },
      directions: {
        text: string,
        options: array(strictObject({ title: string, description: optional(string) })),
        chosen: optional(count),
      },
      skillProposal: { name: string, description: string, instructions: string },
      lintRuleProposal: { name: string, description: string, rule: string },
      toolApproval: { callID: string, toolName: string, summary: string },
      webSearch: { query: string, results: array(strictObject({ title: string, url: string })) },
      reportedIssue: { title: string, body: string },
    },
    common,
  ),
);

// format/conversation-schema.ts
const usage = strictObject({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  webSearchRequests: count,
  cacheWrite1h: optional(count),
  reportedCost: optional(nonNegative),
});
const cost = union(
  "kind",
  tagged("kind", {
    reported: { dollars: nonNegative },
    estimated: { dollars: nonNegative, partial: optional(boolean) },
    unknown: {},
    notBilled: {},
  }),
);
const pendingMessage = strictObject({
  id: nonEmptyString,
  text: string,
  images: optional(array(strictObject({ sha256, mimeType }))),
});
const conversationShape: Shape = {
  formatVersion: oneOf(1),
  provider: optional(string),
  model: optional(string),
  items: array(item),
  feedback: idMap(
    strictObject({
      rating: oneOf("good", "bad"),
      reasons: array(string),
      comment: optional(string),
    }),
  ),
  skillCards: idMap(strictObject({ state: oneOf("pending", "saved", "dismissed") })),
  lintRuleCards: idMap(strictObject({ state: oneOf("pending", "added", "dismissed") })),
  approvalCards: idMap(
    strictObject({
      state: oneOf("pending", "approved", "denied"),
      alwaysAllow: optional(boolean),
    }),
  ),
  resolvedCards: array(string),
  history: array(message),
  queued: array(pendingMessage),
  unsent: array(pendingMessage),
  usage,
  lastRoundUsage: optional(usage),
  estimatedCost: cost,
  sentFacts: array(
    strictObject({ message: count, sections: optional(idMap(matching(SHA256_HEX_PATTERN))) }),
  ),
};
const conversation = strictObject(conversationShape);
