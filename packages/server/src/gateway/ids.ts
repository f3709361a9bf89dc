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

/** The last id's time and random digits (alphabet indexes): the next id of the same time counts on. */
let lastTime = -1;
const lastRandom: number[] = [];

/** The last random digits plus one; false when all 16 were at their top and the count wraps. */
function incrementLastRandom(): boolean {
  for (let index = RANDOM_CHARACTERS - 1; index >= 0; index--) {
    const digit = (lastRandom[index] ?? 0) + 1;
    if (digit < 32) {
      lastRandom[index] = digit;
      return true;
    }
    lastRandom[index] = 0;
  }
  return false;
}

function freshRandom(): void {
  const text = randomCharacters(RANDOM_CHARACTERS);
  for (let index = 0; index < RANDOM_CHARACTERS; index++) {
    lastRandom[index] = ALPHABET.indexOf(text[index] ?? "0");
  }
}

/**
 * A new id: the prefix, 10 base32 characters of the time in milliseconds, then 16 random base32
 * characters (80 bits). Ids made later sort after earlier ones, so new rows land at the end of
 * every index on ids instead of at random places in it: an append touches the same few index
 * pages, on SQLite and PostgreSQL alike. Within one millisecond of one process the random part
 * counts up from the first id's, so ids made one after the other sort in the order they were
 * made: rows ordered by (created_at, id) come back in the order they were written, which
 * placing a crashed server's calls relies on.
 */
export function newId(
  prefix: "msg" | "conv" | "branch" | "job" | "turn" | "wake" | "call" | "server",
  time: number = Date.now(),
): string {
  let value = Math.max(0, Math.floor(time));
  if (value !== lastTime || !incrementLastRandom()) {
    lastTime = value;
    freshRandom();
  }
  let stamp = "";
  for (let index = 0; index < TIME_CHARACTERS; index++) {
    stamp = ALPHABET[value % 32] + stamp;
    value = Math.floor(value / 32);
  }
  let random = "";
  for (const digit of lastRandom) random += ALPHABET[digit];
  return `${prefix}_${stamp}${random}`;
}
