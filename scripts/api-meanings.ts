/**
 * One-line meanings of exported names, keyed by `entry point#name`, for declarations without a
 * doc comment or whose comment does not open with one (a file's header comment sits on its
 * first declaration). An entry here wins over the comment; test/api/public-api.test.ts requires
 * a meaning for every export and no entry here for a name that is not exported.
 */
export const API_MEANINGS: Readonly<Record<string, string>> = {
  "verbatim-llm/core#VerbatimErrorOptions":
    "Where, hint, cause and details given to a new VerbatimError.",
  "verbatim-llm/core#allErrorCodes":
    "Every registered error code with its HTTP status, meaning and remedy.",
  "verbatim-llm/core#errorCodeDefinition": "The registered definition of one error code.",
  "verbatim-llm/core#JsonObject": "A JSON object as the strict parser returns it.",
  "verbatim-llm/core#JsonSyntaxProblem":
    "Why and where a text is not strict JSON (line, column, JSON path).",
  "verbatim-llm/core#StrictParseResult":
    "The outcome of safeParseStrictJson: a value, or the syntax problem.",
  "verbatim-llm/history#Block":
    "One block of a history message: text, image, imageOmitted, toolCall or toolResult.",
  "verbatim-llm/history#BlockType": "The type name of a block.",
  "verbatim-llm/history#Message":
    "One history message: a role and its blocks (provider-independent).",
  "verbatim-llm/history#TextBlock": "Text sent to or written by the model.",
  "verbatim-llm/history#messageSchema": "The zod schema of one history message.",
  "verbatim-llm/history#ChatMLContentPart":
    "One part of a ChatML message's content: text or image.",
  "verbatim-llm/history#ChatMLImagePart":
    "An image part of a ChatML message, by SHA-256 and MIME type.",
  "verbatim-llm/history#ChatMLMessage":
    "One message of canonical ChatML (system, user, assistant or tool).",
  "verbatim-llm/history#ChatMLToolCall": "A tool call of a ChatML assistant message.",
  "verbatim-llm/format#DecodeResult":
    "The outcome of decodeConversation: the conversation, or why it is unreadable.",
  "verbatim-llm/format#createHistoryEncodingCache":
    "A cache for encodeConversation that encodes each history message once.",
  "verbatim-llm/format#FORMAT_VERSION":
    "The archive format version this library writes and reads (1).",
  "verbatim-llm/format#conversationSchema": "The zod schema of agent/conversation.json (format 1).",
  "verbatim-llm/format#ApprovalCard":
    "The state of a tool call waiting for or given the user's approval.",
  "verbatim-llm/format#Feedback": "The user's feedback on an assistant answer.",
  "verbatim-llm/format#LintRuleCard": "A proposed lint rule card and its state.",
  "verbatim-llm/format#PendingMessage": "A user message queued or not yet sent.",
  "verbatim-llm/format#SentFact":
    "Where a turn starts in history and which context sections the model holds after it.",
  "verbatim-llm/format#SkillCard": "A proposed skill card and its state.",
  "verbatim-llm/format#ITEM_TYPES": "The types of panel items a saved conversation holds.",
  "verbatim-llm/format#itemSchema": "The zod schema of one panel item.",
  "verbatim-llm/format#Citation": "A web source cited by an assistant item.",
  "verbatim-llm/format#Item": "One panel item of a saved conversation (what the user sees).",
  "verbatim-llm/format#ItemOfType": "The panel item of one type.",
  "verbatim-llm/format#ItemType": "The type name of a panel item.",
  "verbatim-llm/archive#ConversationArchive":
    "The saver of one package: save, and the turn and new-conversation signals.",
  "verbatim-llm/archive#OpenArchiveOptions":
    "Options of openArchive: the package kind, the settings and the change hook.",
  "verbatim-llm/archive#OpenedArchive":
    "What openArchive returns: the conversation, its images, notices and the archive.",
  "verbatim-llm/archive#PackageKind":
    "The kind of package: document, template or designSystem (only documents keep a conversation).",
  "verbatim-llm/archive#SaveOutcome":
    "What a save did: unchanged, rewritten, removed, kept or skipped.",
  "verbatim-llm/archive#SaveResult": "The outcome of a save and the bytes it wrote.",
  "verbatim-llm/pricing#RequestCostInput":
    "The provider, model and usage whose cost requestCost estimates.",
  "verbatim-llm/providers#PROVIDER_IDS": "The providers verbatim renders for and parses.",
  "verbatim-llm/providers#RenderWarningCode": "The kind of a render warning.",
  "verbatim-llm/providers#RenderedRequest":
    "A rendered request: the exact body and the warnings raised.",
  "verbatim-llm/providers#RetryNotice":
    "A retry the transport is about to make: attempt, delay and reason.",
  "verbatim-llm/providers#checkCachePrefix":
    "Checks that a request body extends the previous one byte for byte, so a prompt cache holds (A27).",
  "verbatim-llm/providers#CachePrefixDifference":
    "The first place where a request stops extending the previous one.",
  "verbatim-llm/providers#CachePrefixOptions":
    "Options of checkCachePrefix (whether to ignore signed material).",
  "verbatim-llm/providers#CachePrefixResult":
    "The outcome of checkCachePrefix: messages appended, or the first difference.",
  "verbatim-llm/conversation#Backend":
    "What runs a conversation's turns: a provider backend or a CLI backend.",
  "verbatim-llm/conversation#CliBackend": "A backend that runs a whole turn in a coding-agent CLI.",
  "verbatim-llm/conversation#CliTurnInput": "What a CLI backend gets for one turn.",
  "verbatim-llm/conversation#CliTurnResult":
    "What a CLI backend returns for one turn: history messages, usage, cost and failure.",
  "verbatim-llm/conversation#ProviderBackend": "A backend that sends one model request per round.",
  "verbatim-llm/conversation#BackendRoundRequest":
    "What a provider backend gets for one round: system, history, tools, images.",
  "verbatim-llm/conversation#BackendRoundResult":
    "What a provider backend returns for one round: the assistant message, usage and stop reason.",
  "verbatim-llm/conversation#CompactionPreview":
    "Whether compaction is available now and what it would send.",
  "verbatim-llm/conversation#CompactionResult":
    "The outcome of a compaction: the summary, or why it failed.",
  "verbatim-llm/conversation#LiveConversation":
    "A running conversation: send, cancel, cards, compaction, snapshot and save.",
  "verbatim-llm/conversation#LiveConversationOptions":
    "What every live conversation is given: backend, tools, prices, archive, hooks.",
  "verbatim-llm/conversation#OutgoingMessage": "A user message to send: text and images.",
  "verbatim-llm/conversation#SendResult":
    "The outcome of send: the turn started, or the message queued.",
  "verbatim-llm/conversation#ToolOutput":
    "What a host tool returns: content, error flag and images.",
  "verbatim-llm/conversation#ToolRunContext":
    "What a host tool gets while it runs (the cancel signal).",
  "verbatim-llm/conversation#OpenLiveConversationOptions":
    "Options of openLiveConversation: archive options and the change hook.",
  "verbatim-llm/conversation#OpenedLiveConversation":
    "What openLiveConversation returns: the conversation, its archive and save().",
  "verbatim-llm/conversation#ProviderBackendOptions":
    "Options of providerBackend: provider, model, key, cache and transport settings.",
  "verbatim-llm/conversation#PreviewInput": "What previewCompaction reads of a conversation.",
  "verbatim-llm/trajectory#trajectoryItemSchema": "The zod schema of one trajectory item.",
  "verbatim-llm/trajectory#AgentMessageItem": "A message the agent wrote.",
  "verbatim-llm/trajectory#CommandExecutionItem":
    "A command the agent ran, with its output and exit code.",
  "verbatim-llm/trajectory#ErrorItem": "An error reported during the job.",
  "verbatim-llm/trajectory#ExecutionMechanism":
    "Where a tool ran: hosted by the provider or run locally.",
  "verbatim-llm/trajectory#FileChangeItem": "Files the agent changed.",
  "verbatim-llm/trajectory#PlanItem": "The agent's plan.",
  "verbatim-llm/trajectory#ReasoningItem": "Reasoning the agent showed.",
  "verbatim-llm/trajectory#SystemMessageItem": "A system message given to the agent.",
  "verbatim-llm/trajectory#ToolCallItem": "A tool call the agent made.",
  "verbatim-llm/trajectory#ToolResultItem": "The result of a tool call.",
  "verbatim-llm/trajectory#TrajectoryItem": "One semantic item of a job's trajectory.",
  "verbatim-llm/trajectory#NoticeItem":
    "Something the environment did or said that the agent did not ask for (shown, not sent).",
  "verbatim-llm/trajectory#ModelUsage": "The tokens (and cost, when reported) of model calls.",
  "verbatim-llm/trajectory#TrajectoryItemType": "The type name of a trajectory item.",
  "verbatim-llm/trajectory#UserMessageItem": "A message from the user.",
  "verbatim-llm/trajectory#WebSearchItem": "A web search the agent made.",
  "verbatim-llm/trajectory#storedTurnItemSchema": "The zod schema of one stored turn-item row.",
  "verbatim-llm/trajectory#StoredTurnItem":
    "One stored turn-item row: turn, position, revision, key and item.",
  "verbatim-llm/trajectory#createSanitizer": "A sanitizer with the given secret rules.",
  "verbatim-llm/trajectory#SanitizeResult": "A sanitized value and whether anything was redacted.",
  "verbatim-llm/trajectory#Sanitizer": "Redacts secrets from trajectory items.",
  "verbatim-llm/trajectory#SanitizerOptions":
    "Options of createSanitizer: the secret rules, extra rules and the replacement text.",
  "verbatim-llm/trajectory#TrajectoryProjectionOptions":
    "Options of the ChatML projection of a trajectory (turn order).",
  "verbatim-llm/trajectory#PageLimitOptions": "The byte limit a page must fit.",
  "verbatim-llm/trajectory#parseStoredRowsJsonl":
    "Parses stored turn-item rows from JSON Lines, reporting bad lines.",
  "verbatim-llm/trajectory#ParsedRows":
    "The rows parsed from JSON Lines and the problems of the lines refused.",
  "verbatim-llm-server/store#OpenDatabaseOptions":
    "Options of openDatabase: the PostgreSQL pool size and prepared statements.",
  "verbatim-llm-server/store#MigrationReport":
    "The migrations a run applied and all those the database now has.",
  "verbatim-llm-server/store#StoreSchema": "The Kysely schema of the store's tables.",
  "verbatim-llm-server/gateway#CompressInput":
    "What compressContext gets: the anchor, and the summary or a summarizer.",
  "verbatim-llm-server/gateway#AppendInput": "A chain of messages to append to a conversation.",
  "verbatim-llm-server/gateway#FinishInput":
    "The final content and status of a message in progress.",
  "verbatim-llm-server/gateway#GatewayMessageStoreOptions":
    "Options of GatewayMessageStore: size limits, the message cache budget and the clock.",
  "verbatim-llm-server/gateway#FINAL_STATUSES":
    "The statuses after which a gateway message never changes.",
  "verbatim-llm-server/gateway#FinalStatus": "A final status of a gateway message.",
  "verbatim-llm-server/gateway#GatewayConversation":
    "A stored conversation of the gateway: id, subject, metadata and creation time.",
  "verbatim-llm-server/gateway#GatewayFacts":
    "What the gateway records of a model call: model, provider, response id, usage, stop reason.",
  "verbatim-llm-server/gateway#GatewayMessageMetadata":
    "A message's metadata: the caller's pairs and the gateway's facts.",
  "verbatim-llm-server/gateway#CALLER_METADATA_MAX_KEY_LENGTH":
    "The longest key of caller metadata.",
  "verbatim-llm-server/gateway#CALLER_METADATA_MAX_VALUE_LENGTH":
    "The longest value of caller metadata.",
  "verbatim-llm-server/gateway#DEFAULT_GATEWAY_LIMITS": "The gateway's default size limits.",
  "verbatim-llm-server/gateway#MAX_RETRY_BUDGET": "The largest retry budget a job may ask for.",
  "verbatim-llm-server/gateway#BackgroundAgentJobsOptions":
    "Options of BackgroundAgentJobs: the sanitizer and the clock.",
  "verbatim-llm-server/gateway#MAX_ITEM_BYTES":
    "The largest trajectory item a job accepts, in bytes.",
  "verbatim-llm-server/gateway#JOB_END_STATUSES":
    "The statuses that end a job: succeeded, failed, cancelled.",
  "verbatim-llm-server/gateway#JobTurn":
    "One turn of a background job, with its attempt and status.",
  "verbatim-llm-server/gateway#TurnStatus": "The status of a job turn.",
  "verbatim-llm-server/gateway#WakeEvent": "An event that wakes a conversation when a job ends.",
  "verbatim-llm-server/server#DEFAULT_BODY_LIMIT_BYTES":
    "The largest request body the server reads by default.",
  "verbatim-llm-server/server#DEFAULT_RATE_LIMIT": "The default per-key rate limit.",
  "verbatim-llm-server/server#ServerOptions":
    "Options of buildServer: database, operator token, upstream, limits, timeouts, logging, console page.",
  "verbatim-llm-server/server#DEFAULT_DATABASE":
    "The database `verbatim serve` opens when none is given.",
  "verbatim-llm-server/server#DEFAULT_HOST":
    "The address `verbatim serve` listens on by default (loopback).",
  "verbatim-llm-server/server#DEFAULT_PORT": "The port `verbatim serve` listens on by default.",
  "verbatim-llm-server/server#RunningServer":
    "A started server: its URL, database, operator token and close().",
  "verbatim-llm-server/server#StartServerOptions":
    "Options of startServer: database, host, port, working folder, environment and logger.",
  "verbatim-llm-server/server#createApiKey":
    "Creates an API key for a subject; the key is shown once, only its hash is stored.",
  "verbatim-llm-server/server#CreatedApiKey":
    "A new API key, the subject it belongs to and when it was created.",
  "verbatim-llm-server/server#NO_UPSTREAM":
    "An upstream configuration with no provider (the model routes answer upstream_not_configured).",
  "verbatim-llm-server/server#ModelRoute": "A model name or prefix and the provider it is sent to.",
  "verbatim-llm-server/server#UpstreamConfig":
    "The providers, model routes, timeout and retries the server calls models with.",
  "verbatim-llm-server/server#ErrorReply":
    "The body of every error reply: code, message, where and hint.",
  "verbatim-llm/core#JsonValue": "A JSON value as the strict parser returns it.",
  "verbatim-llm/history#Role": "The role of a history message: user, assistant or tool.",
  "verbatim-llm/history#ChatMLTextPart": "A text part of a ChatML message.",
  "verbatim-llm/format#FieldProblem":
    "One field of a conversation.json the decoder refused, and why.",
  "verbatim-llm/internal#ITEM_KEY_MAX_LENGTH": "The longest item key, in characters.",
  "verbatim-llm/trajectory#SecretRule": "A named pattern the sanitizer redacts.",
  "verbatim-llm/trajectory#GatewayProjectionOptions":
    "Options of the ChatML projection of gateway messages.",
  "verbatim-llm/internal#pageByteLength": "The size in bytes of a page as it is sent (B12).",
  "verbatim-llm/trajectory#RowLineProblem":
    "A line of a JSON Lines file that is not a valid stored row, and why.",
  "verbatim-llm-server/gateway#CALLER_METADATA_MAX_KEYS":
    "The most keys caller metadata may have (as in the Responses API).",
  "verbatim-llm-server/gateway#GatewayMessageStatus": "The lifecycle status of a gateway message.",
  "verbatim-llm-server/server#startServer":
    "Opens the database, migrates it and starts the HTTP server (what `verbatim serve` runs).",
  "verbatim-llm/interop#ConversationSource":
    "The tools whose sessions import as conversations: claude-code or codex.",
  "verbatim-llm/interop#PackageWrite": "How an imported conversation was written into its package.",
  "verbatim-llm/interop#ConversationOutcome":
    "What happened to one imported conversation: imported, skipped or refused, and why.",
  "verbatim-llm/interop#ImportProgress":
    "Files, messages and bytes read so far, for a progress bar.",
  "verbatim-llm/interop#PackageImportReport":
    "The report of an import into packages: every conversation's outcome and what was left out.",
  "verbatim-llm/interop#RowsImportReport":
    "The report of an import into a rows file: every turn's outcome and what was left out.",
  "verbatim-llm/interop#TurnOutcome":
    "What happened to one imported turn: appended, skipped or refused, and why.",
  "verbatim-llm/interop#ExportFormat":
    "The line formats of an export: openai-jsonl or chatml-jsonl.",
  "verbatim-llm/interop#ExportOptions": "What an export writes and how.",
  "verbatim-llm/interop#ExportedPackage": "One package's exported line and what it left out.",
};
