import { z } from "zod";
import { exactlyOneOfKeys } from "../history/schema.js";
import { FORMAT_VERSION, conversationSchema } from "./conversation-schema.js";
import { idMapValueSchemas } from "./id-map.js";

type JsonSchemaObject = Record<string, unknown>;

const generationOptions = {
  io: "input",
  target: "draft-2020-12",
  unrepresentable: "throw",
  override: (context: { zodSchema: unknown; jsonSchema: JsonSchemaObject }) => {
    const schema = context.zodSchema as z.ZodType;
    const valueSchema = idMapValueSchemas.get(schema);
    if (valueSchema !== undefined) {
      // An id map is decoded by a transform; in the file it is an object keyed by any string.
      for (const key of Object.keys(context.jsonSchema)) delete context.jsonSchema[key];
      const value = z.toJSONSchema(valueSchema, generationOptions) as JsonSchemaObject;
      delete value["$schema"];
      Object.assign(context.jsonSchema, {
        type: "object",
        propertyNames: { type: "string" },
        additionalProperties: value,
      });
      return;
    }
    const keys = exactlyOneOfKeys.get(schema);
    if (keys !== undefined) {
      context.jsonSchema["oneOf"] = keys.map((key) => ({ required: [key] }));
    }
  },
} as const;

/**
 * The JSON Schema (draft 2020-12) of format 1, generated from the zod schemas that the decoder
 * uses (checked in as docs/format-1.schema.json; a test fails when it drifts). The decoder is
 * the reference: it also refuses repeated keys, which JSON Schema cannot express.
 */
export function formatJsonSchema(): JsonSchemaObject {
  const generated = z.toJSONSchema(conversationSchema, generationOptions) as JsonSchemaObject;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: `verbatim conversation archive, format ${FORMAT_VERSION} (agent/conversation.json)`,
    description:
      "Generated from src/format by `npm run docs:generate`; docs/format-1.md describes every field.",
    ...rest,
  };
}
