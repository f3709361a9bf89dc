import { MAX_JSON_DEPTH } from "./strict-json.js";

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
