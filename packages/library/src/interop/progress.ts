import { stat } from "node:fs/promises";

/** How far an import has come: files done, bytes read, messages (or rows) imported. */
export interface ImportProgress {
  readonly files: number;
  readonly totalFiles: number;
  readonly bytes: number;
  readonly totalBytes: number;
  readonly messages: number;
}

/**
 * Counts an import's progress file by file for `onProgress` (a progress bar): the files' total
 * size is read once at the start, and each call of the returned function adds one file done,
 * its bytes and its messages. Without a listener it does nothing (not even the stat).
 */
export async function progressCounter(
  files: readonly string[],
  onProgress: ((progress: ImportProgress) => void) | undefined,
): Promise<(bytes: number, messages: number) => void> {
  if (onProgress === undefined) return () => undefined;
  let totalBytes = 0;
  for (const file of files) totalBytes += (await stat(file).catch(() => ({ size: 0 }))).size;
  const progress = { files: 0, totalFiles: files.length, bytes: 0, totalBytes, messages: 0 };
  return (bytes, messages) => {
    progress.files++;
    progress.bytes += bytes;
    progress.messages += messages;
    onProgress({ ...progress });
  };
}
