/**
 * verbatim-llm/internal: for verbatim-llm-server only. Not covered by semver: it may change in
 * any release, a patch release included, so an application imports the other entry points.
 *
 * The server package imports the library through entry points only (docs/architecture.md); these
 * are the names it needs that a user of a layer does not call (the stored-text rule, the
 * registration of error codes, what a command of `verbatim` is made with, the steps of an import
 * the server runs itself, per-field schemas and wire helpers), and names that were public once and
 * that nobody outside the library calls. docs/api.md lists them with their meanings.
 *
 * Every thread of the server loads this file, so it re-exports only modules that are cheap to load:
 * no importer of a source, no CLI agent, no HTTP transport (those load with the public entry
 * point that uses them).
 */

// core: the error-code registry's writer side, JSON decoding steps, the stored-text rule.
export { errorCodeGroups, registerErrorCodes } from "../core/error-codes.js";
export { decodeJsonBytes, safeParseStrictJsonInSlices } from "../core/strict-json.js";
export { isSha256Hex } from "../core/hash.js";
export {
  STORED_TEXT_HINT,
  describeStoredTextFault,
  findStoredTextFault,
  isStorableText,
  repairStoredText,
  storedTextFaultWhere,
} from "../core/stored-text.js";
export type { StoredTextFault, StoredTextProblem } from "../core/stored-text.js";
export { isWellFormedText } from "../core/bytes.js";

// history: the enumerations and schemas behind the message types, checks of stored content.
export { BLOCK_TYPES, IMAGE_OMITTED_TEXT, ROLES } from "../history/message.js";
export { blockSchema, messageIsWellFormed, roleSchema } from "../history/schema.js";
export { isBlockList } from "../history/block-check.js";

// archive: the image file names of a package.
export { isImageFileName } from "../archive/layout.js";

// pricing: the steps requestCost and accumulateCost are made of.
export { imagePrice, roundDollars, tokenPrice, totalCost, totalInput } from "../pricing/cost.js";

// providers: signed material within a turn, endpoints, retries and the SSE decoder.
export { attachSignedMaterial, hasSignedMaterial } from "../providers/signed.js";
export {
  PROVIDER_ENDPOINTS,
  requestHeaders,
  requestUrl,
  resolveEndpoint,
} from "../providers/endpoints.js";
export type { ProviderEndpoint } from "../providers/endpoints.js";
export { SseDecoder } from "../providers/wire/sse.js";

// trajectory: one schema per item type, item keys, usage records, paging steps.
export {
  BUILT_IN_TOOL_NAMES,
  TRAJECTORY_ITEM_TYPES,
  agentMessageItemSchema,
  commandExecutionItemSchema,
  errorItemSchema,
  executionMechanismSchema,
  fileChangeItemSchema,
  noticeItemSchema,
  planItemSchema,
  reasoningItemSchema,
  systemMessageItemSchema,
  toolCallItemSchema,
  toolResultItemSchema,
  userMessageItemSchema,
  webSearchItemSchema,
} from "../trajectory/items.js";
export {
  CLIENT_ITEM_KEY_PREFIX,
  ITEM_KEY_MAX_LENGTH,
  isClientItemKey,
  itemKeySchema,
} from "../trajectory/row.js";
export { MODEL_USAGE_COUNTS, modelUsageSchema, sumUsage, usageOf } from "../trajectory/usage.js";
export { defaultSecretRules } from "../trajectory/sanitizer.js";
export { projectGatewayMessage } from "../trajectory/gateway-projection.js";
export { fitPageInSteps, pageByteLength } from "../trajectory/paging.js";

// interop: the steps of an import the server runs itself (files, threads, progress, summary).
export { IMPORTED_NOTICE_KIND } from "../interop/imported.js";
export { TRAJECTORY_SOURCES } from "../interop/trajectories/rows.js";
export { acceptsFile, acceptsTrajectoryFile, defaultImportJobs } from "../interop/source-names.js";
export { listSourceFiles, readSourceFile } from "../interop/source-files.js";
export { progressCounter } from "../interop/progress.js";
export { leftOutHeading, leftOutTotals, progressLine } from "../interop/summary.js";
export type { LeftOutTotal } from "../interop/summary.js";
export { trajectoryJobs } from "../interop/trajectories/jobs.js";
export type { ImportedJob, ImportedJobTurn } from "../interop/trajectories/jobs.js";
export { chatMLLine } from "../interop/export/training-lines.js";
export { responseText as geminiResponseText } from "../interop/gemini-cli/parts.js";
export { spawnSiblingWorker } from "../interop/sibling-worker.js";

// cli: what a command of the `verbatim` command line is made with (the server's commands).
export {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  parseCommandArgs,
  usageError,
  type Command,
} from "../cli/command.js";
export { processIO } from "../cli/io.js";
export { readInputFile } from "../cli/paths.js";
export { terminalLine, terminalLines } from "../cli/terminal-text.js";
export { importProgressBar, type ImportProgressBar } from "../cli/progress-bar.js";
export { JOBS_TARGET, parseJobs } from "../cli/jobs-option.js";
export type { ServerCommandName } from "../cli/server-commands.js";
