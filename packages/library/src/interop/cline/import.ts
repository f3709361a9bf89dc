import { join } from "node:path";
import { ConversationBuilder } from "../conversation-builder.js";
import {
  IMPORTED_NOTICE_KIND,
  packageName,
  type FileImport,
  type ImportedConversation,
} from "../imported.js";
import { arrayOf, compactJson } from "../json-access.js";
import { LeftOutLedger, LineLedger } from "../report.js";
import { addApiHistory, CLINE_MISSING_RESULT, messageRoles, messageTimes } from "./history.js";
import { modelAt, readTaskMetadata } from "./metadata.js";
import { placeRequests, readUiMessages, type ClineRequest } from "./requests.js";
import { API_HISTORY_FILE, KNOWN_OTHER_FILES, readTaskFolder } from "./task-files.js";

const OTHER_FILE_REASON = "a file of the task folder the import does not read: not conversation";
const UNPLACED_REASON =
  "the request's answer is not in the API history (the request failed, or its messages were condensed or deleted since): no message carries its usage and cost; they count in the conversation's totals (a package) and among the calls outside the history (a database: on the history's first message)";

/** Which extension wrote the folder, from its global storage folder's name. */
function productOf(folder: string): string {
  if (folder.includes("rooveterinaryinc.roo-cline")) return "Roo Code";
  if (folder.includes("kilocode.kilo-code")) return "Kilo Code";
  if (folder.includes("saoudrizwan.claude-dev")) return "Cline";
  return "Cline (or a fork: Roo Code, Kilo Code)";
}

/**
 * Imports one Cline task folder (docs/interop/cline.md) from any file in it: the API history as
 * the conversation, each request's usage and cost from the UI messages, the models from the
 * metadata; every message and UI message imported or reported left out.
 */
export function importClineTask(file: string, bytes: Uint8Array): FileImport {
  const task = readTaskFolder(file, bytes);
  const leftOut = new LeftOutLedger();
  const ledger = new LineLedger(leftOut);
  const apiFile = task.apiFile;
  const messages = task.api.reason === undefined ? arrayOf(task.api.value) : undefined;
  if (messages === undefined) {
    leftOut.add(
      apiFile,
      API_HISTORY_FILE,
      task.api.reason ?? "not a JSON array of messages: kept in the source only",
    );
    return { conversations: [], leftOut: leftOut.list(), account: emptyAccount(apiFile) };
  }
  ledger.file(apiFile, messages.length);
  for (const name of task.otherFiles)
    leftOut.add(join(task.folder, name), name, KNOWN_OTHER_FILES[name] ?? OTHER_FILE_REASON);
  const requests = readUiMessages(task.ui, leftOut);
  const metadata = readTaskMetadata([task.metadata, task.historyItem], leftOut);
  const placed = placeRequests(requests, messageRoles(messages), messageTimes(messages));
  const product = productOf(task.folder);
  const builder = new ConversationBuilder();
  builder.notice(
    "imported",
    IMPORTED_NOTICE_KIND,
    `Imported from ${product}: task ${task.taskId} (${API_HISTORY_FILE}).`,
    compactJson({
      source: "cline",
      sourceId: task.taskId,
      file: API_HISTORY_FILE,
      sha256: task.sha256,
    }),
  );
  if (metadata.parentTaskId !== undefined) {
    builder.notice(
      "parent",
      "subtask",
      `A subtask of task ${metadata.parentTaskId}${metadata.rootTaskId === undefined ? "" : ` (root task ${metadata.rootTaskId})`}.`,
    );
  }
  for (const notice of metadata.notices)
    builder.notice(`meta-${notice.key}`, "meta", `Task ${notice.key}`, notice.detail);
  const lastModel = requests.findLast((request) => request.model !== undefined) ?? undefined;
  const lastUse = metadata.models.at(-1);
  builder.provider = lastModel?.provider ?? lastUse?.provider;
  const modelOf = (request: ClineRequest): string | undefined =>
    modelAt(metadata.models, request.ts)?.model;
  addApiHistory(messages, { file: apiFile, builder, ledger, placed, modelAt: modelOf });
  for (const request of placed.unplaced) {
    builder.unplacedCall(`R${request.record}`, request.usage, request.model ?? modelOf(request));
    leftOut.add(
      task.ui?.file ?? apiFile,
      "request usage not placed on a message",
      UNPLACED_REASON,
      request.record,
    );
  }
  const built = builder.finish((call) => ({
    type: "toolResult",
    callID: call.id,
    toolName: call.name,
    isError: false,
    content: CLINE_MISSING_RESULT,
  }));
  for (const { call, atEnd } of built.unanswered) {
    built.conversation.items.push({
      id: `missing-${call.id}`,
      type: "notice",
      kind: "interruptedToolResult",
      text: `The ${call.name} call ${call.id} has no tool_result in the source (${atEnd ? "the task stopped while it ran" : "the result went back as text, or the task went on without it"}): the import added the result Cline sends for such a call, "${CLINE_MISSING_RESULT}", marked here as added.`,
    });
  }
  const conversation = built.conversation;
  const model = lastModel?.model ?? lastUse?.model;
  if (model !== undefined) conversation.model = model;
  const costs = requests.map((request) => request.usage.reportedCost);
  if (costs.length > 0 && costs.every((cost) => cost !== undefined)) {
    const dollars = costs.reduce<number>((sum, cost) => sum + (cost ?? 0), 0);
    conversation.usage = { ...conversation.usage, reportedCost: dollars };
    conversation.estimatedCost = { kind: "reported", dollars };
  }
  const imported: ImportedConversation = {
    name: packageName(["cline", task.taskId]),
    source: "cline",
    sourceId: task.taskId,
    file: apiFile,
    sourceSha256: task.sha256,
    conversation,
    images: built.images,
    ...(built.calls.size === 0 ? {} : { calls: built.calls }),
    ...(built.outsideCalls.length === 0 ? {} : { callsOutsideHistory: built.outsideCalls }),
    ...(metadata.parentTaskId === undefined
      ? {}
      : { parent: { sourceId: metadata.parentTaskId, agentId: task.taskId } }),
  };
  const account = ledger.accounts()[0] ?? emptyAccount(apiFile);
  return { conversations: [imported], leftOut: leftOut.list(), account };
}

function emptyAccount(file: string): FileImport["account"] {
  return { file, lines: 0, imported: 0, leftOut: 0 };
}
