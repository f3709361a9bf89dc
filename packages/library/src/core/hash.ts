import { createHash } from "node:crypto";

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Lowercase hex SHA-256 of bytes or of a string's UTF-8 encoding. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

export function isSha256Hex(value: string): boolean {
  return SHA256_HEX.test(value);
}
