import { join } from "node:path";

/** The folder the archive owns inside a package, and the files in it (A1). */
export const AGENT_FOLDER = "agent";
export const CONVERSATION_FILE = "conversation.json";
export const IMAGES_FOLDER = "images";

/** The package keeps at most this many bytes of images (A16): 20 MiB. */
export const IMAGE_BUDGET_BYTES = 20 * 1024 * 1024;

export interface PackagePaths {
  readonly packageDir: string;
  readonly agentDir: string;
  readonly conversationFile: string;
  readonly imagesDir: string;
}

export function packagePaths(packageDir: string): PackagePaths {
  const agentDir = join(packageDir, AGENT_FOLDER);
  return {
    packageDir,
    agentDir,
    conversationFile: join(agentDir, CONVERSATION_FILE),
    imagesDir: join(agentDir, IMAGES_FOLDER),
  };
}

/** File extension by MIME type. Any other type is stored as `.bin`. */
const EXTENSION_BY_MIME_TYPE: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/heic": "heic",
  "image/heif": "heif",
  "image/avif": "avif",
  "image/bmp": "bmp",
  "image/tiff": "tiff",
  "image/svg+xml": "svg",
};
const FALLBACK_EXTENSION = "bin";
const KNOWN_EXTENSIONS = [
  ...new Set([...Object.values(EXTENSION_BY_MIME_TYPE), FALLBACK_EXTENSION]),
];

/** `<64 lowercase hex>.<known extension>`: the only names the archive reads, writes or deletes. */
const IMAGE_FILE_NAME = new RegExp(`^[0-9a-f]{64}\\.(?:${KNOWN_EXTENSIONS.join("|")})$`);

export function extensionOf(mimeType: string): string {
  return Object.hasOwn(EXTENSION_BY_MIME_TYPE, mimeType)
    ? (EXTENSION_BY_MIME_TYPE[mimeType] ?? FALLBACK_EXTENSION)
    : FALLBACK_EXTENSION;
}

/** The file name of an image in `agent/images/` (A3): its SHA-256 and the MIME type's extension. */
export function imageFileName(sha256: string, mimeType: string): string {
  return `${sha256}.${extensionOf(mimeType)}`;
}

/** True for the name of an image file as the archive names them. */
export function isImageFileName(name: string): boolean {
  return IMAGE_FILE_NAME.test(name);
}

/** Temporary files of an unfinished write: `.verbatim-<16 hex>.tmp`, removed by the next save. */
const TEMPORARY_FILE_NAME = /^\.verbatim-[0-9a-f]{16}\.tmp$/;

export function isTemporaryFileName(name: string): boolean {
  return TEMPORARY_FILE_NAME.test(name);
}
