/** One registered error code: its HTTP status and the text that docs/errors.md shows. */
export interface ErrorCodeDefinition {
  readonly code: string;
  readonly httpStatus: number;
  /** What went wrong, in one sentence. */
  readonly meaning: string;
  /** What the user should do about it. */
  readonly remedy: string;
}

export function defineCodes<const T extends readonly ErrorCodeDefinition[]>(codes: T): T {
  return codes;
}
