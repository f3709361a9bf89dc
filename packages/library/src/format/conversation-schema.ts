import { z } from "zod";
import type { Message } from "../history/message.js";
import { messageSchema, mimeTypeSchema, sha256HexSchema } from "../history/schema.js";
import { idMap } from "./id-map.js";
import { itemSchema } from "./items.js";

/** Format 1 of `agent/conversation.json` (SPEC A6–A11; docs/format-1.md). */
const count = z.number().int().nonnegative();

/**
 * Usage counts model tokens only (A7). `input` counts the input tokens neither read from nor
 * written to the cache (as Anthropic reports them), so a request's total input is
 * `input + cacheRead + cacheWrite`. `cacheWrite1h` and `reportedCost` are written only when
 * present.
 */
export const usageSchema = z.strictObject({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  webSearchRequests: count,
  cacheWrite1h: count.optional(),
  reportedCost: z.number().nonnegative().optional(),
});

/** Cost of the whole conversation so far (A8). */
export const costSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("reported"), dollars: z.number().nonnegative() }),
  z.strictObject({
    kind: z.literal("estimated"),
    dollars: z.number().nonnegative(),
    /** True when some requests reported their cost and the rest were estimated. */
    partial: z.boolean().optional(),
  }),
  z.strictObject({ kind: z.literal("unknown") }),
  z.strictObject({ kind: z.literal("notBilled") }),
]);

export const feedbackSchema = z.strictObject({
  rating: z.enum(["good", "bad"]),
  reasons: z.array(z.string()),
  comment: z.string().optional(),
});

export const skillCardSchema = z.strictObject({ state: z.enum(["pending", "saved", "dismissed"]) });
export const lintRuleCardSchema = z.strictObject({
  state: z.enum(["pending", "added", "dismissed"]),
});
export const approvalCardSchema = z.strictObject({
  state: z.enum(["pending", "approved", "denied"]),
  /** The user allowed this tool for the rest of the conversation. */
  alwaysAllow: z.boolean().optional(),
});

/** An image attached to a pending message: its bytes are in `agent/images/` like history images. */
const imageReferenceSchema = z.strictObject({ sha256: sha256HexSchema, mimeType: mimeTypeSchema });

/** A message waiting in the queue, or put back into the input box (A6 `queued`, `unsent`). */
export const pendingMessageSchema = z.strictObject({
  id: z.string().min(1),
  text: z.string(),
  images: z.array(imageReferenceSchema).optional(),
});

/**
 * The turn-facts record (A9): where turn i starts in `history`, and the context sections that
 * turn left with the model, by name, each as the SHA-256 of the content the model saw.
 */
export const sentFactSchema = z.strictObject({
  message: count,
  sections: idMap(
    z.string().regex(/^[0-9a-f]{64}$/, "expected the SHA-256 (hex) of the section"),
  ).optional(),
});

export const FORMAT_VERSION = 1;
/** One line per version (docs/format-1.md keeps the full text). */
export const FORMAT_CHANGELOG: Readonly<Record<number, string>> = {
  1: "First version: items, feedback, card maps, history, queued, unsent, usage, cost, sentFacts.",
};

export const conversationSchema = z.strictObject({
  formatVersion: z.literal(FORMAT_VERSION),
  provider: z.string().optional(),
  model: z.string().optional(),
  items: z.array(itemSchema),
  feedback: idMap(feedbackSchema),
  skillCards: idMap(skillCardSchema),
  lintRuleCards: idMap(lintRuleCardSchema),
  approvalCards: idMap(approvalCardSchema),
  resolvedCards: z.array(z.string()),
  history: z.array(messageSchema),
  queued: z.array(pendingMessageSchema),
  unsent: z.array(pendingMessageSchema),
  usage: usageSchema,
  lastRoundUsage: usageSchema.optional(),
  estimatedCost: costSchema,
  sentFacts: z.array(sentFactSchema),
});

/** A decoded conversation. `history` holds immutable messages (the encoder caches them by identity). */
export type SavedConversation = Omit<z.output<typeof conversationSchema>, "history"> & {
  history: Message[];
};
export type Usage = z.output<typeof usageSchema>;
export type Cost = z.output<typeof costSchema>;
export type Feedback = z.output<typeof feedbackSchema>;
export type SkillCard = z.output<typeof skillCardSchema>;
export type LintRuleCard = z.output<typeof lintRuleCardSchema>;
export type ApprovalCard = z.output<typeof approvalCardSchema>;
export type PendingMessage = z.output<typeof pendingMessageSchema>;
export type SentFact = z.output<typeof sentFactSchema>;
