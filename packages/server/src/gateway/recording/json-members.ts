/** Reading members of parsed JSON of unknown shape (recorded requests and answers). */
export type Json = Record<string, unknown>;

/** The value as an object of members, or undefined (arrays and null are not). */
export const record = (value: unknown): Json | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Json)
    : undefined;

/** The value if it is text, else "". */
export const text = (value: unknown): string => (typeof value === "string" ? value : "");
