/** Migration 0021's indexes, the same on both dialects. */

/**
 * Indexes that led with a column other than the subject, as they are now: each statement that
 * used them names the subject. The plain `id` indexes find the owner of an id.
 */
export const SUBJECT_INDEXES: readonly (readonly [name: string, definition: string])[] = [
  ["ai_gateway_conversations_id", "ai_gateway_conversations (id)"],
  ["ai_gateway_branches_conversation", "ai_gateway_branches (subject_uid, conversation_id)"],
  ["ai_gateway_chain_nodes_conversation", "ai_gateway_chain_nodes (subject_uid, conversation_id)"],
  [
    "ai_gateway_messages_conversation",
    "ai_gateway_messages (subject_uid, conversation_id, created_at)",
  ],
  ["ai_gateway_messages_previous", "ai_gateway_messages (subject_uid, previous_message_id)"],
  ["ai_gateway_recorded_calls_id", "ai_gateway_recorded_calls (id)"],
  [
    "ai_gateway_recorded_calls_conversation",
    "ai_gateway_recorded_calls (subject_uid, conversation_id, created_at)",
  ],
  [
    "ai_gateway_recorded_calls_base",
    "ai_gateway_recorded_calls (subject_uid, request_base_call_id) where request_base_call_id is not null",
  ],
  ["background_agent_jobs_id", "background_agent_jobs (id)"],
  [
    "background_agent_job_wake_events_job",
    "background_agent_job_wake_events (subject_uid, job_id)",
  ],
  // Claims are per subject (and conversation), oldest unclaimed first.
  [
    "background_agent_job_wake_events_unclaimed",
    "background_agent_job_wake_events (subject_uid, claimed_at, created_at)",
  ],
];

/** Indexes the new keys make redundant, or that the ones above replace. */
export const DROPPED_INDEXES = [
  "ai_gateway_branches_conversation",
  "ai_gateway_chain_nodes_conversation",
  "ai_gateway_messages_conversation",
  "ai_gateway_messages_previous",
  "ai_gateway_recorded_calls_conversation",
  "ai_gateway_recorded_calls_base",
  "ai_gateway_recorded_calls_subject",
  "background_agent_job_wake_events_unclaimed",
];
