export { CONVERSATION_SOURCES } from "./imported.js";
export type {
  ConversationSource,
  FileImport,
  ImportedCall,
  ImportedConversation,
} from "./imported.js";
export type { FileAccount, LeftOutEntry } from "./report.js";
export { writeImportedPackage } from "./archive-target.js";
export type { PackageOutcome, PackageWrite } from "./archive-target.js";
export {
  importConversationFile,
  importIntoPackages,
  readConversationFile,
} from "./package-import.js";
export type {
  ConversationFileRead,
  ConversationOutcome,
  ImportProgress,
  PackageImportReport,
} from "./package-import.js";
export { ROWS_TARGET_SOURCES } from "./trajectories/rows.js";
export type { TrajectoryFileImport, TrajectorySource } from "./trajectories/rows.js";
export { importIntoRowsFile, importTrajectoryFile } from "./trajectories/rows-import.js";
export type { RowsImportReport, TurnOutcome } from "./trajectories/rows-import.js";
export { EXPORT_FORMATS, exportLine } from "./export/training-lines.js";
export type { ExportFormat, ExportOptions } from "./export/training-lines.js";
export { exportPackages } from "./export/export-packages.js";
export type { ExportedPackage } from "./export/export-packages.js";
