import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const TIME_CHARACTERS = 10;
const RANDOM_CHARACTERS = 16;

/** Random bytes drawn 4 KiB at a time: one system call for hundreds of ids. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomCharacters(count: number): string {
  if (poolOffset + count > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let text = "";
  for (let index = 0; index < count; index++) {
    // 256 is a multiple of 32: every character is equally likely.
    text += ALPHABET[(pool[poolOffset + index] ?? 0) & 31];
  }
  poolOffset += count;
  return text;
}

/**
 * A new id: the prefix, 10 base32 characters of the time in milliseconds, then 16 random base32
 * characters (80 bits). Ids made later sort after earlier ones (to the millisecond), so new rows
 * land at the end of every index on ids instead of at random places in it: an append touches
 * the same few index pages, on SQLite and PostgreSQL alike.
 */
export function newId(
  prefix: "msg" | "conv" | "branch" | "job" | "turn" | "wake" | "call",
  time: number = Date.now(),
): string {
  let value = Math.max(0, Math.floor(time));
  let stamp = "";
  for (let index = 0; index < TIME_CHARACTERS; index++) {
    stamp = ALPHABET[value % 32] + stamp;
    value = Math.floor(value / 32);
  }
  return `${prefix}_${stamp}${randomCharacters(RANDOM_CHARACTERS)}`;
}
