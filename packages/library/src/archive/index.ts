export { openArchive } from "./archive.js";
export { FolderSyncBatch } from "./folder-sync-batch.js";
export type {
  ArchiveNotice,
  ArchiveSettings,
  ConversationArchive,
  OpenArchiveOptions,
  OpenedArchive,
  PackageKind,
  SaveOutcome,
  SaveResult,
} from "./archive.js";
export { IMAGE_BUDGET_BYTES, imageFileName } from "./layout.js";
export { summarizePackage } from "./summary.js";
export type { PackageSummary } from "./summary.js";
