import { z } from "zod";

/**
 * A JSON object keyed by arbitrary strings (item ids, section names), decoded into a Map so
 * that no key ever becomes object structure: `__proto__` and `constructor` are data like any
 * other key and round-trip.
 */
export const idMapValueSchemas = new WeakMap<z.ZodType, z.ZodType>();

export function idMap<T extends z.ZodType>(valueSchema: T) {
  const schema = z.unknown().transform((input, context): Map<string, z.output<T>> => {
    const result = new Map<string, z.output<T>>();
    let entries: [unknown, unknown][];
    if (input instanceof Map) {
      // An already decoded conversation validated again: its maps are Maps.
      entries = [...(input as Map<unknown, unknown>)];
    } else if (typeof input === "object" && input !== null && !Array.isArray(input)) {
      const record = input as Record<string, unknown>;
      entries = Object.keys(record).map((key) => [key, record[key]]);
    } else {
      context.addIssue({ code: "custom", message: "expected an object keyed by id" });
      return result;
    }
    for (const [key, value] of entries) {
      if (typeof key !== "string") {
        context.addIssue({ code: "custom", message: "expected string keys" });
        continue;
      }
      const parsed = valueSchema.safeParse(value);
      if (parsed.success) {
        result.set(key, parsed.data);
        continue;
      }
      for (const issue of parsed.error.issues) {
        context.addIssue({ ...issue, path: [key, ...issue.path] } as Parameters<
          typeof context.addIssue
        >[0]);
      }
    }
    return result;
  });
  idMapValueSchemas.set(schema, valueSchema);
  return schema;
}
