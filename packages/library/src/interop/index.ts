export { CONVERSATION_SOURCES, IMPORTED_NOTICE_KIND } from "./imported.js";
export type {
  ConversationSource,
  FileImport,
  ImportedCall,
  ImportedConversation,
} from "./imported.js";
export type { FileAccount, LeftOutEntry } from "./report.js";
export { importClaudeCodeFile } from "./claude-code/import.js";
export type { ClaudeCodeFileOptions } from "./claude-code/import.js";
export { importCodexRollout } from "./codex/import.js";
export { importStampOf, writeImportedPackage } from "./archive-target.js";
export type { PackageOutcome, PackageWrite } from "./archive-target.js";
export {
  acceptsFile,
  defaultImportJobs,
  importConversationFile,
  importIntoPackages,
} from "./package-import.js";
export type { ConversationOutcome, ImportProgress, PackageImportReport } from "./package-import.js";
export { listSourceFiles, readSourceFile } from "./source-files.js";
export { progressCounter } from "./progress.js";
export { leftOutHeading, leftOutTotals, progressLine } from "./summary.js";
export type { LeftOutTotal } from "./summary.js";
export { ROWS_TARGET_SOURCES, TRAJECTORY_SOURCES } from "./trajectories/rows.js";
export { importCodexRolloutAsRows } from "./codex/trajectory.js";
export type { TrajectoryFileImport, TrajectorySource } from "./trajectories/rows.js";
export { importSweAgentTrajectory } from "./trajectories/swe-agent.js";
export { importOpenHandsEvents, importOpenHandsResolver } from "./trajectories/openhands.js";
export { importInspectLog } from "./trajectories/inspect.js";
export {
  acceptsTrajectoryFile,
  importIntoRowsFile,
  importTrajectoryFile,
} from "./trajectories/rows-import.js";
export { trajectoryJobs } from "./trajectories/jobs.js";
export type { ImportedJob, ImportedJobTurn } from "./trajectories/jobs.js";
export type { RowsImportReport, TurnOutcome } from "./trajectories/rows-import.js";
export { EXPORT_FORMATS, chatMLLine, exportLine } from "./export/training-lines.js";
export type { ExportFormat, ExportOptions } from "./export/training-lines.js";
export { exportPackages, findPackages } from "./export/export-packages.js";
export type { ExportedPackage } from "./export/export-packages.js";
export { spawnSiblingWorker } from "./sibling-worker.js";
