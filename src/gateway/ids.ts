import { randomBytes } from "node:crypto";

/** A new id: the prefix and 26 random base32 characters (130 bits). */
export function newId(prefix: "msg" | "conv" | "branch" | "job" | "turn" | "wake"): string {
  const bytes = randomBytes(17);
  let bits = 0;
  let value = 0;
  let text = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && text.length < 26) {
      text += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${prefix}_${text}`;
}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
