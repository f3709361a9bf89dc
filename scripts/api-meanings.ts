/**
 * One-line meanings of exported names, keyed by `entry point#name`, for declarations without a
 * doc comment or whose comment does not open with one (a file's header comment sits on its
 * first declaration). An entry here wins over the comment; test/api/public-api.test.ts requires
 * a meaning for every export and no entry here for a name that is not exported.
 */
export const API_MEANINGS: Readonly<Record<string, string>> = {
  "verbatim/core#VerbatimErrorOptions":
    "Where, hint, cause and details given to a new VerbatimError.",
  "verbatim/core#allErrorCodes":
    "Every registered error code with its HTTP status, meaning and remedy.",
  "verbatim/core#errorCodeDefinition": "The registered definition of one error code.",
  "verbatim/core#JsonObject": "A JSON object as the strict parser returns it.",
  "verbatim/core#JsonSyntaxProblem":
    "Why and where a text is not strict JSON (line, column, JSON path).",
  "verbatim/core#StrictParseResult":
    "The outcome of safeParseStrictJson: a value, or the syntax problem.",
  "verbatim/core#isSha256Hex": "True for a lowercase hexadecimal SHA-256 (64 characters).",
  "verbatim/history#BLOCK_TYPES": "The five block types of a history message.",
  "verbatim/history#ROLES": "The three roles of a history message: user, assistant, tool.",
  "verbatim/history#Block":
    "One block of a history message: text, image, imageOmitted, toolCall or toolResult.",
  "verbatim/history#BlockType": "The type name of a block.",
  "verbatim/history#Message": "One history message: a role and its blocks (provider-independent).",
  "verbatim/history#TextBlock": "Text sent to or written by the model.",
  "verbatim/history#blockSchema": "The zod schema of one history block.",
  "verbatim/history#messageSchema": "The zod schema of one history message.",
  "verbatim/history#ChatMLContentPart": "One part of a ChatML message's content: text or image.",
  "verbatim/history#ChatMLImagePart":
    "An image part of a ChatML message, by SHA-256 and MIME type.",
  "verbatim/history#ChatMLMessage":
    "One message of canonical ChatML (system, user, assistant or tool).",
  "verbatim/history#ChatMLToolCall": "A tool call of a ChatML assistant message.",
  "verbatim/format#DecodeResult":
    "The outcome of decodeConversation: the conversation, or why it is unreadable.",
  "verbatim/format#createHistoryEncodingCache":
    "A cache for encodeConversation that encodes each history message once.",
  "verbatim/format#FORMAT_VERSION": "The archive format version this library writes and reads (1).",
  "verbatim/format#conversationSchema": "The zod schema of agent/conversation.json (format 1).",
  "verbatim/format#ApprovalCard":
    "The state of a tool call waiting for or given the user's approval.",
  "verbatim/format#Feedback": "The user's feedback on an assistant answer.",
  "verbatim/format#LintRuleCard": "A proposed lint rule card and its state.",
  "verbatim/format#PendingMessage": "A user message queued or not yet sent.",
  "verbatim/format#SentFact":
    "Where a turn starts in history and which context sections the model holds after it.",
  "verbatim/format#SkillCard": "A proposed skill card and its state.",
  "verbatim/format#ITEM_TYPES": "The types of panel items a saved conversation holds.",
  "verbatim/format#itemSchema": "The zod schema of one panel item.",
  "verbatim/format#Citation": "A web source cited by an assistant item.",
  "verbatim/format#Item": "One panel item of a saved conversation (what the user sees).",
  "verbatim/format#ItemOfType": "The panel item of one type.",
  "verbatim/format#ItemType": "The type name of a panel item.",
  "verbatim/archive#ConversationArchive":
    "The saver of one package: save, and the turn and new-conversation signals.",
  "verbatim/archive#OpenArchiveOptions":
    "Options of openArchive: the package kind, the settings and the change hook.",
  "verbatim/archive#OpenedArchive":
    "What openArchive returns: the conversation, its images, notices and the archive.",
  "verbatim/archive#PackageKind":
    "The kind of package: document, template or designSystem (only documents keep a conversation).",
  "verbatim/archive#SaveOutcome":
    "What a save did: unchanged, rewritten, removed, kept or skipped.",
  "verbatim/archive#SaveResult": "The outcome of a save and the bytes it wrote.",
  "verbatim/archive#isImageFileName":
    "True for the name of an image file as the archive names them.",
  "verbatim/pricing#RequestCostInput":
    "The provider, model and usage whose cost requestCost estimates.",
  "verbatim/providers#PROVIDER_IDS": "The providers verbatim renders for and parses.",
  "verbatim/providers#RenderWarningCode": "The kind of a render warning.",
  "verbatim/providers#RenderedRequest":
    "A rendered request: the exact body and the warnings raised.",
  "verbatim/providers#RetryNotice":
    "A retry the transport is about to make: attempt, delay and reason.",
  "verbatim/providers#PROVIDER_ENDPOINTS":
    "Each provider's default base URL, path and key variables.",
  "verbatim/providers#resolveEndpoint":
    "The URL, headers and key of a provider from options and the environment.",
  "verbatim/providers#ProviderEndpoint":
    "Where a provider answers and which environment variables name its key.",
  "verbatim/providers#SseDecoder":
    "Decodes a server-sent-event byte stream into events, chunk by chunk.",
  "verbatim/providers#checkCachePrefix":
    "Checks that a request body extends the previous one byte for byte, so a prompt cache holds (A27).",
  "verbatim/providers#CachePrefixDifference":
    "The first place where a request stops extending the previous one.",
  "verbatim/providers#CachePrefixOptions":
    "Options of checkCachePrefix (whether to ignore signed material).",
  "verbatim/providers#CachePrefixResult":
    "The outcome of checkCachePrefix: messages appended, or the first difference.",
  "verbatim/conversation#Backend":
    "What runs a conversation's turns: a provider backend or a CLI backend.",
  "verbatim/conversation#CliBackend": "A backend that runs a whole turn in a coding-agent CLI.",
  "verbatim/conversation#CliTurnInput": "What a CLI backend gets for one turn.",
  "verbatim/conversation#CliTurnResult":
    "What a CLI backend returns for one turn: history messages, usage, cost and failure.",
  "verbatim/conversation#ProviderBackend": "A backend that sends one model request per round.",
  "verbatim/conversation#BackendRoundRequest":
    "What a provider backend gets for one round: system, history, tools, images.",
  "verbatim/conversation#BackendRoundResult":
    "What a provider backend returns for one round: the assistant message, usage and stop reason.",
  "verbatim/conversation#CompactionPreview":
    "Whether compaction is available now and what it would send.",
  "verbatim/conversation#CompactionResult":
    "The outcome of a compaction: the summary, or why it failed.",
  "verbatim/conversation#LiveConversation":
    "A running conversation: send, cancel, cards, compaction, snapshot and save.",
  "verbatim/conversation#LiveConversationOptions":
    "What every live conversation is given: backend, tools, prices, archive, hooks.",
  "verbatim/conversation#OutgoingMessage": "A user message to send: text and images.",
  "verbatim/conversation#SendResult":
    "The outcome of send: the turn started, or the message queued.",
  "verbatim/conversation#ToolOutput": "What a host tool returns: content, error flag and images.",
  "verbatim/conversation#ToolRunContext":
    "What a host tool gets while it runs (the cancel signal).",
  "verbatim/conversation#OpenLiveConversationOptions":
    "Options of openLiveConversation: archive options and the change hook.",
  "verbatim/conversation#OpenedLiveConversation":
    "What openLiveConversation returns: the conversation, its archive and save().",
  "verbatim/conversation#ProviderBackendOptions":
    "Options of providerBackend: provider, model, key, cache and transport settings.",
  "verbatim/conversation#PreviewInput": "What previewCompaction reads of a conversation.",
  "verbatim/trajectory#TRAJECTORY_ITEM_TYPES": "The types of semantic trajectory items.",
  "verbatim/trajectory#trajectoryItemSchema": "The zod schema of one trajectory item.",
  "verbatim/trajectory#AgentMessageItem": "A message the agent wrote.",
  "verbatim/trajectory#CommandExecutionItem":
    "A command the agent ran, with its output and exit code.",
  "verbatim/trajectory#ErrorItem": "An error reported during the job.",
  "verbatim/trajectory#ExecutionMechanism":
    "Where a tool ran: hosted by the provider or run locally.",
  "verbatim/trajectory#FileChangeItem": "Files the agent changed.",
  "verbatim/trajectory#PlanItem": "The agent's plan.",
  "verbatim/trajectory#ReasoningItem": "Reasoning the agent showed.",
  "verbatim/trajectory#SystemMessageItem": "A system message given to the agent.",
  "verbatim/trajectory#ToolCallItem": "A tool call the agent made.",
  "verbatim/trajectory#ToolResultItem": "The result of a tool call.",
  "verbatim/trajectory#TrajectoryItem": "One semantic item of a job's trajectory.",
  "verbatim/trajectory#TrajectoryItemType": "The type name of a trajectory item.",
  "verbatim/trajectory#UserMessageItem": "A message from the user.",
  "verbatim/trajectory#WebSearchItem": "A web search the agent made.",
  "verbatim/trajectory#itemKeySchema": "The zod schema of an item key (non-empty, bounded length).",
  "verbatim/trajectory#storedTurnItemSchema": "The zod schema of one stored turn-item row.",
  "verbatim/trajectory#StoredTurnItem":
    "One stored turn-item row: turn, position, revision, key and item.",
  "verbatim/trajectory#createSanitizer": "A sanitizer with the given secret rules.",
  "verbatim/trajectory#defaultSecretRules": "The secret patterns the default sanitizer redacts.",
  "verbatim/trajectory#SanitizeResult": "A sanitized value and whether anything was redacted.",
  "verbatim/trajectory#Sanitizer": "Redacts secrets from trajectory items.",
  "verbatim/trajectory#SanitizerOptions":
    "Options of createSanitizer: the secret rules, extra rules and the replacement text.",
  "verbatim/trajectory#TrajectoryProjectionOptions":
    "Options of the ChatML projection of a trajectory (turn order).",
  "verbatim/trajectory#PageLimitOptions": "The byte limit a page must fit.",
  "verbatim/trajectory#parseStoredRowsJsonl":
    "Parses stored turn-item rows from JSON Lines, reporting bad lines.",
  "verbatim/trajectory#ParsedRows":
    "The rows parsed from JSON Lines and the problems of the lines refused.",
  "verbatim/store#OpenDatabaseOptions":
    "Options of openDatabase: the PostgreSQL pool size and prepared statements.",
  "verbatim/store#MigrationReport":
    "The migrations a run applied and all those the database now has.",
  "verbatim/store#StoreSchema": "The Kysely schema of the store's tables.",
  "verbatim/gateway#CompressInput":
    "What compressContext gets: the anchor, and the summary or a summarizer.",
  "verbatim/gateway#AppendInput": "A chain of messages to append to a conversation.",
  "verbatim/gateway#FinishInput": "The final content and status of a message in progress.",
  "verbatim/gateway#GatewayMessageStoreOptions":
    "Options of GatewayMessageStore: size limits, the message cache budget and the clock.",
  "verbatim/gateway#FINAL_STATUSES": "The statuses after which a gateway message never changes.",
  "verbatim/gateway#FinalStatus": "A final status of a gateway message.",
  "verbatim/gateway#GatewayConversation":
    "A stored conversation of the gateway: id, subject, metadata and creation time.",
  "verbatim/gateway#GatewayFacts":
    "What the gateway records of a model call: model, provider, response id, usage, stop reason.",
  "verbatim/gateway#GatewayMessageMetadata":
    "A message's metadata: the caller's pairs and the gateway's facts.",
  "verbatim/gateway#CALLER_METADATA_MAX_KEY_LENGTH": "The longest key of caller metadata.",
  "verbatim/gateway#CALLER_METADATA_MAX_VALUE_LENGTH": "The longest value of caller metadata.",
  "verbatim/gateway#DEFAULT_GATEWAY_LIMITS": "The gateway's default size limits.",
  "verbatim/gateway#MAX_RETRY_BUDGET": "The largest retry budget a job may ask for.",
  "verbatim/gateway#BackgroundAgentJobsOptions":
    "Options of BackgroundAgentJobs: the sanitizer and the clock.",
  "verbatim/gateway#MAX_ITEM_BYTES": "The largest trajectory item a job accepts, in bytes.",
  "verbatim/gateway#JOB_END_STATUSES": "The statuses that end a job: succeeded, failed, cancelled.",
  "verbatim/gateway#JobTurn": "One turn of a background job, with its attempt and status.",
  "verbatim/gateway#TurnStatus": "The status of a job turn.",
  "verbatim/gateway#WakeEvent": "An event that wakes a conversation when a job ends.",
  "verbatim/server#DEFAULT_BODY_LIMIT_BYTES":
    "The largest request body the server reads by default.",
  "verbatim/server#DEFAULT_RATE_LIMIT": "The default per-key rate limit.",
  "verbatim/server#ServerOptions":
    "Options of buildServer: database, operator token, upstream, limits, timeouts, logging, console page.",
  "verbatim/server#DEFAULT_DATABASE": "The database `verbatim serve` opens when none is given.",
  "verbatim/server#DEFAULT_HOST": "The address `verbatim serve` listens on by default (loopback).",
  "verbatim/server#DEFAULT_PORT": "The port `verbatim serve` listens on by default.",
  "verbatim/server#RunningServer":
    "A started server: its URL, database, operator token and close().",
  "verbatim/server#StartServerOptions":
    "Options of startServer: database, host, port, working folder, environment and logger.",
  "verbatim/server#createApiKey":
    "Creates an API key for a subject; the key is shown once, only its hash is stored.",
  "verbatim/server#CreatedApiKey":
    "A new API key, the subject it belongs to and when it was created.",
  "verbatim/server#NO_UPSTREAM":
    "An upstream configuration with no provider (the model routes answer upstream_not_configured).",
  "verbatim/server#ModelRoute": "A model name or prefix and the provider it is sent to.",
  "verbatim/server#UpstreamConfig":
    "The providers, model routes, timeout and retries the server calls models with.",
  "verbatim/server#ErrorReply": "The body of every error reply: code, message, where and hint.",
  "verbatim/core#JsonValue": "A JSON value as the strict parser returns it.",
  "verbatim/history#Role": "The role of a history message: user, assistant or tool.",
  "verbatim/history#ChatMLTextPart": "A text part of a ChatML message.",
  "verbatim/format#FieldProblem": "One field of a conversation.json the decoder refused, and why.",
  "verbatim/trajectory#ITEM_KEY_MAX_LENGTH": "The longest item key, in characters.",
  "verbatim/trajectory#SecretRule": "A named pattern the sanitizer redacts.",
  "verbatim/trajectory#GatewayProjectionOptions":
    "Options of the ChatML projection of gateway messages.",
  "verbatim/trajectory#pageByteLength": "The size in bytes of a page as it is sent (B12).",
  "verbatim/trajectory#RowLineProblem":
    "A line of a JSON Lines file that is not a valid stored row, and why.",
  "verbatim/gateway#CALLER_METADATA_MAX_KEYS":
    "The most keys caller metadata may have (as in the Responses API).",
  "verbatim/gateway#GatewayMessageStatus": "The lifecycle status of a gateway message.",
  "verbatim/server#startServer":
    "Opens the database, migrates it and starts the HTTP server (what `verbatim serve` runs).",
};
