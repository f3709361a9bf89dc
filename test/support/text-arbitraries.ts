import fc from "fast-check";

/**
 * Strings for property tests: any UTF-16 code unit (lone surrogates included), whole code
 * points from every plane, and the characters the byte rules single out.
 */
const specialCharacters = fc.constantFrom(
  "😀",
  "\uff61",
  "\u2028",
  "\u2029",
  "\u007f",
  "\u0000",
  "\u001f",
  "\n",
  "\r",
  "\t",
  '"',
  "\\",
  "/",
  "é",
  "日本",
  "\ud800",
  "\udfff",
  "\udc00\ud83d",
);
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
const anyCodePoint = fc.string({ unit: "binary", minLength: 1, maxLength: 1 });

export const textUnit = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: specialCharacters },
  { weight: 1, arbitrary: anyCodeUnit },
  { weight: 1, arbitrary: anyCodePoint },
);

export function anyText(constraints: { minLength?: number; maxLength?: number } = {}) {
  return fc.string({ unit: textUnit, maxLength: 12, ...constraints });
}

/** Keys that must stay data: prototype names, the empty key, keys that sort by UTF-16. */
export const anyKey = fc.oneof(
  { weight: 3, arbitrary: anyText() },
  {
    weight: 1,
    arbitrary: fc.constantFrom("__proto__", "constructor", "toString", "", "0", "10", "😀", "｡"),
  },
);

/** Numbers JSON can hold: integers, any finite double (tiny, huge, subnormal, -0). */
export const anyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 0.1),
);

/** Token counts: non-negative safe integers. */
export const anyCount = fc.oneof(
  fc.nat(),
  fc.constantFrom(0, Number.MAX_SAFE_INTEGER),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);
/** Dollars: any non-negative finite double, huge and subnormal included (never -0). */
export const anyNonNegative = fc.oneof(
  anyCount,
  fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
  fc.constantFrom(5e-324, 1e-7, 0.0213, 1e21, 1e300, Number.MAX_VALUE),
);

/** Builds an object with own enumerable properties, `__proto__` included as a plain key. */
export function objectFromEntries(entries: readonly (readonly [string, unknown])[]) {
  const result: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    Object.defineProperty(result, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}
