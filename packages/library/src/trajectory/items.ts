import { z } from "zod";
import { modelUsageSchema } from "./usage.js";

/**
 * The semantic items of a background agent job's trajectory (SPEC B7): one typed, sanitized
 * record of something that happened in a job turn. Items are stored as they are and projected
 * to ChatML at read time (B9); `docs/trajectories.md` documents every type and what it
 * projects to.
 *
 * Fields every item may carry:
 * - `provider_item_id`: the agent runtime's or provider's own id for the item (wire identity:
 *   kept for replay and audit, never shown to the model, B12);
 * - `redacted`: true when the sanitizer replaced a secret somewhere in the item;
 * - `content_truncated`: true when the runtime cut the item's content before storing it;
 * - `usage`: tokens and cost of the model call that produced the item (on the first item of
 *   that call only, so that summing items sums calls).
 */

/** Who ran a tool (B10): the model provider, or the service's own dynamic tools. */
export const executionMechanismSchema = z.enum(["provider_hosted", "local_dynamic"]);
export type ExecutionMechanism = z.output<typeof executionMechanismSchema>;

const nonEmpty = z.string().min(1);

const common = {
  provider_item_id: z.string().optional(),
  redacted: z.boolean().optional(),
  content_truncated: z.boolean().optional(),
  usage: modelUsageSchema.optional(),
};

/** A system instruction given to the agent (projects to a `system` message). */
export const systemMessageItemSchema = z.strictObject({
  type: z.literal("system_message"),
  text: z.string(),
  ...common,
});

/** A message from the job's caller: the first prompt, a steering message, a later prompt. */
export const userMessageItemSchema = z.strictObject({
  type: z.literal("user_message"),
  text: z.string(),
  /** Images sent with the message, as URLs (https: or data:). */
  images: z.array(z.strictObject({ url: nonEmpty })).optional(),
  ...common,
});

/** Text the agent wrote. */
export const agentMessageItemSchema = z.strictObject({
  type: z.literal("agent_message"),
  text: z.string(),
  /** The provider's id of the response that produced it (wire identity). */
  provider_response_id: z.string().optional(),
  ...common,
});

/** The model's reasoning summary: kept for replay, projects to no message. */
export const reasoningItemSchema = z.strictObject({
  type: z.literal("reasoning"),
  summary: z.array(z.string()),
  ...common,
});

/** A call of a named tool, with its arguments as the model wrote them (JSON text). */
export const toolCallItemSchema = z.strictObject({
  type: z.literal("tool_call"),
  call_id: nonEmpty,
  name: nonEmpty,
  arguments: z.string(),
  execution_mechanism: executionMechanismSchema,
  ...common,
});

/** The result of a tool call, paired with it by `call_id`. */
export const toolResultItemSchema = z.strictObject({
  type: z.literal("tool_result"),
  call_id: nonEmpty,
  name: nonEmpty,
  output: z.string(),
  is_error: z.boolean(),
  execution_mechanism: executionMechanismSchema,
  ...common,
});

const runStatus = z.enum(["in_progress", "completed", "failed", "declined"]);

/** A shell command the agent ran: the call and, once it ended, its output in one item. */
export const commandExecutionItemSchema = z.strictObject({
  type: z.literal("command_execution"),
  call_id: nonEmpty,
  command: z.array(z.string()).min(1),
  cwd: z.string().optional(),
  status: runStatus,
  output: z.string(),
  /** null while running, or when the command never started. */
  exit_code: z.int().nullable(),
  execution_mechanism: executionMechanismSchema,
  ...common,
});

/** Files the agent changed (a patch): the call and, once applied, its outcome in one item. */
export const fileChangeItemSchema = z.strictObject({
  type: z.literal("file_change"),
  call_id: nonEmpty,
  changes: z
    .array(
      z.strictObject({
        path: nonEmpty,
        kind: z.enum(["add", "delete", "update"]),
        /** A unified diff of the change (absent for deletions). */
        diff: z.string().optional(),
        /** The new path when the update is a move. */
        move_path: z.string().optional(),
      }),
    )
    .min(1),
  status: runStatus,
  execution_mechanism: executionMechanismSchema,
  ...common,
});

/** A web search: the query and, once done, the results, in one item. */
export const webSearchItemSchema = z.strictObject({
  type: z.literal("web_search"),
  call_id: nonEmpty,
  query: z.string(),
  status: runStatus,
  results: z
    .array(z.strictObject({ title: z.string(), url: z.string(), snippet: z.string() }))
    .optional(),
  execution_mechanism: executionMechanismSchema,
  ...common,
});

/** The agent's plan for the turn: kept for replay and display, projects to no message. */
export const planItemSchema = z.strictObject({
  type: z.literal("plan"),
  explanation: z.string().optional(),
  steps: z.array(
    z.strictObject({
      step: z.string(),
      status: z.enum(["pending", "in_progress", "completed"]),
    }),
  ),
  ...common,
});

/** An error the runtime reported during the turn: kept for replay, projects to no message. */
export const errorItemSchema = z.strictObject({
  type: z.literal("error"),
  message: z.string(),
  code: z.string().optional(),
  retryable: z.boolean().optional(),
  ...common,
});

/**
 * Something the agent runtime or its environment recorded during the turn that is neither a
 * message nor a call the model made (an OpenHands environment action such as
 * `change_agent_state`): kept for replay and display, projects to no message.
 */
export const noticeItemSchema = z.strictObject({
  type: z.literal("notice"),
  /** What kind of event it was, in the source's words (`change_agent_state`). */
  kind: nonEmpty,
  text: z.string(),
  /** The event's own arguments, as compact JSON text. */
  details: z.string().optional(),
  ...common,
});

export const trajectoryItemSchema = z.discriminatedUnion("type", [
  systemMessageItemSchema,
  userMessageItemSchema,
  agentMessageItemSchema,
  reasoningItemSchema,
  toolCallItemSchema,
  toolResultItemSchema,
  commandExecutionItemSchema,
  fileChangeItemSchema,
  webSearchItemSchema,
  planItemSchema,
  errorItemSchema,
  noticeItemSchema,
]);

export type SystemMessageItem = z.output<typeof systemMessageItemSchema>;
export type UserMessageItem = z.output<typeof userMessageItemSchema>;
export type AgentMessageItem = z.output<typeof agentMessageItemSchema>;
export type ReasoningItem = z.output<typeof reasoningItemSchema>;
export type ToolCallItem = z.output<typeof toolCallItemSchema>;
export type ToolResultItem = z.output<typeof toolResultItemSchema>;
export type CommandExecutionItem = z.output<typeof commandExecutionItemSchema>;
export type FileChangeItem = z.output<typeof fileChangeItemSchema>;
export type WebSearchItem = z.output<typeof webSearchItemSchema>;
export type PlanItem = z.output<typeof planItemSchema>;
export type ErrorItem = z.output<typeof errorItemSchema>;
export type NoticeItem = z.output<typeof noticeItemSchema>;
export type TrajectoryItem = z.output<typeof trajectoryItemSchema>;
export type TrajectoryItemType = TrajectoryItem["type"];

/** The types of semantic trajectory items. */
export const TRAJECTORY_ITEM_TYPES: readonly TrajectoryItemType[] = [
  "system_message",
  "user_message",
  "agent_message",
  "reasoning",
  "tool_call",
  "tool_result",
  "command_execution",
  "file_change",
  "web_search",
  "plan",
  "error",
  "notice",
];

/** The projected tool names of the items that are a call and its result in one. */
export const BUILT_IN_TOOL_NAMES = {
  command_execution: "shell",
  file_change: "apply_patch",
  web_search: "web_search",
} as const;
