import type * as NodeCrypto from "node:crypto";

const SHA256_HEX = /^[0-9a-f]{64}$/;

let crypto: typeof NodeCrypto | undefined;

/** Lowercase hex SHA-256 of bytes or of a string's UTF-8 encoding. */
export function sha256Hex(data: Uint8Array | string): string {
  // node:crypto is loaded on first use: loading it takes about 20 ms of CPU here, a fifth of
  // `node -e 0`, and `verbatim archive check` of a package without images never hashes.
  crypto ??= process.getBuiltinModule("node:crypto");
  return crypto.createHash("sha256").update(data).digest("hex");
}

/** True for a lowercase hexadecimal SHA-256 (64 characters). */
export function isSha256Hex(value: string): boolean {
  return SHA256_HEX.test(value);
}
