import { z } from "zod";

/**
 * The 13 panel item types of format 1 (SPEC A6). Every item has `id` and `type`, its type's
 * fields, and may carry `detail` (text shown when the item is expanded) and `citations`.
 * docs/format-1.md describes what each shows in an agent panel.
 */
export const citationSchema = z.strictObject({
  url: z.string(),
  title: z.string().optional(),
  citedText: z.string().optional(),
});

const common = {
  id: z.string().min(1),
  detail: z.string().optional(),
  citations: z.array(citationSchema).optional(),
};

export const userItemSchema = z.strictObject({
  ...common,
  type: z.literal("user"),
  text: z.string(),
  hasImage: z.boolean().optional(),
});

export const assistantItemSchema = z.strictObject({
  ...common,
  type: z.literal("assistant"),
  text: z.string(),
});

export const thinkingItemSchema = z.strictObject({
  ...common,
  type: z.literal("thinking"),
  text: z.string(),
});

export const toolStatusSchema = z.enum(["running", "succeeded", "failed", "cancelled", "denied"]);

export const toolItemSchema = z.strictObject({
  ...common,
  type: z.literal("tool"),
  name: z.string(),
  status: toolStatusSchema,
  callID: z.string().optional(),
  statusText: z.string().optional(),
  summary: z.string().optional(),
});

export const noticeItemSchema = z.strictObject({
  ...common,
  type: z.literal("notice"),
  /** What the notice is about, e.g. `unreadableConversation`, `contextFull`, `compacted`. */
  kind: z.string(),
  text: z.string(),
  /** A button the notice offers, e.g. `compact`. */
  action: z.string().optional(),
});

export const failureItemSchema = z.strictObject({
  ...common,
  type: z.literal("failure"),
  message: z.string(),
});

export const questionSchema = z.strictObject({
  text: z.string(),
  options: z.array(z.string()).optional(),
  answer: z.string().optional(),
});

export const questionsItemSchema = z.strictObject({
  ...common,
  type: z.literal("questions"),
  questions: z.array(questionSchema),
});

export const directionSchema = z.strictObject({
  title: z.string(),
  description: z.string().optional(),
});

export const directionsItemSchema = z.strictObject({
  ...common,
  type: z.literal("directions"),
  text: z.string(),
  options: z.array(directionSchema),
  chosen: z.number().int().nonnegative().optional(),
});

export const skillProposalItemSchema = z.strictObject({
  ...common,
  type: z.literal("skillProposal"),
  name: z.string(),
  description: z.string(),
  instructions: z.string(),
});

export const lintRuleProposalItemSchema = z.strictObject({
  ...common,
  type: z.literal("lintRuleProposal"),
  name: z.string(),
  description: z.string(),
  rule: z.string(),
});

export const toolApprovalItemSchema = z.strictObject({
  ...common,
  type: z.literal("toolApproval"),
  callID: z.string(),
  toolName: z.string(),
  /** What the tool is about to do, as the panel shows it. */
  summary: z.string(),
});

export const webSearchResultSchema = z.strictObject({
  title: z.string(),
  url: z.string(),
});

export const webSearchItemSchema = z.strictObject({
  ...common,
  type: z.literal("webSearch"),
  query: z.string(),
  results: z.array(webSearchResultSchema),
});

export const reportedIssueItemSchema = z.strictObject({
  ...common,
  type: z.literal("reportedIssue"),
  title: z.string(),
  body: z.string(),
});

export const itemSchema = z.discriminatedUnion("type", [
  userItemSchema,
  assistantItemSchema,
  thinkingItemSchema,
  toolItemSchema,
  noticeItemSchema,
  failureItemSchema,
  questionsItemSchema,
  directionsItemSchema,
  skillProposalItemSchema,
  lintRuleProposalItemSchema,
  toolApprovalItemSchema,
  webSearchItemSchema,
  reportedIssueItemSchema,
]);

export type Item = z.output<typeof itemSchema>;
export type ItemType = Item["type"];
export type ItemOfType<T extends ItemType> = Extract<Item, { type: T }>;
export type Citation = z.output<typeof citationSchema>;

export const ITEM_TYPES: readonly ItemType[] = [
  "user",
  "assistant",
  "thinking",
  "tool",
  "notice",
  "failure",
  "questions",
  "directions",
  "skillProposal",
  "lintRuleProposal",
  "toolApproval",
  "webSearch",
  "reportedIssue",
];
