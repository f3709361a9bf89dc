/**
 * The deepest nesting of arrays and objects verbatim reads and writes: the one limit of every
 * walker of JSON text or values (the strict parser and its HTTP API bodies, the checked
 * JSON.parse of the format-1 decoder, the canonical writer and the search for what it refuses,
 * the cache-prefix checker's tree, `nestsTooDeep` for imports). Each counts from its own start:
 * see core/json-depth.case.ts for what each does at the limit.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * Whether a parsed JSON value nests arrays and objects deeper than the strict parser allows
 * (MAX_JSON_DEPTH, the HTTP API's limit): JSON.parse takes any depth, and the recursive code
 * after it would overflow the stack. Iterative, so the check itself cannot.
 */
export function nestsTooDeep(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: object[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const current = stack.pop() as object;
    const depth = depths.pop() as number;
    if (depth > MAX_JSON_DEPTH) return true;
    for (const member of Object.values(current)) {
      if (typeof member === "object" && member !== null) {
        stack.push(member);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
