import { mkdir, open, rmdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import {
  writeAll,
  writeGroups,
  type FileWriterOptions,
  type PackageFileWriter,
} from "../../../packages/library/src/archive/file-writer.js";

/**
 * A deliberately non-atomic writer, kept to prove that the crash test can fail: it truncates
 * the file in place and writes the new bytes over it, with no temporary file, no fsync and no
 * rename. A process killed in the middle leaves a torn conversation.json.
 */
export function naiveFileWriter(options: FileWriterOptions = {}): PackageFileWriter {
  const step = options.onStep ?? (() => {});
  const pieceBytes = options.pieceBytes ?? 8 * 1024 * 1024;
  return {
    async writeFile(folder, name, pieces) {
      const target = join(folder, name);
      step("openTemporary", target);
      const handle = await open(target, "w");
      let written = 0;
      try {
        for (const group of writeGroups(pieces, pieceBytes)) {
          step("write", target);
          await writeAll(handle, group);
          for (const buffer of group) written += buffer.length;
        }
      } finally {
        await handle.close();
      }
      return written;
    },
    async syncFolder() {},
    async makeFolder(path) {
      step("makeFolder", path);
      await mkdir(path);
    },
    async removeFile(path) {
      step("removeFile", path);
      await unlink(path);
    },
    async removeFolder(path) {
      step("removeFolder", path);
      await rmdir(path);
    },
  };
}
