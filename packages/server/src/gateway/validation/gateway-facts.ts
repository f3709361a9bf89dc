import { z } from "zod";
import { isStorableText } from "verbatim-llm/internal";
import type { GatewayFacts } from "../conversations/message-types.js";
import {
  NOTED_IMAGE_URLS_MAX,
  NOTED_IMAGE_URL_MAX_LENGTH,
  checkStoredText,
  invalidInput,
} from "./checks.js";

const shortText = (max: number) =>
  z
    .string()
    .max(max, `at most ${max} characters`)
    .refine(isStorableText, "not well-formed Unicode, or holds U+0000 (NUL)");
const count = z.int().min(0);

const usageSchema = z.strictObject({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  webSearchRequests: count,
  cacheWrite1h: count.optional(),
  reportedCost: z.number().min(0).optional(),
});

const gatewayFactsShape = {
  model: shortText(200).optional(),
  provider: shortText(100).optional(),
  providerResponseId: shortText(256).optional(),
  usage: usageSchema.optional(),
  stopReason: shortText(64).optional(),
  error: z.strictObject({ code: shortText(100), message: shortText(4000) }).optional(),
  inputRole: z.enum(["system", "developer"]).optional(),
  recordedCallId: shortText(200).optional(),
  imageUrls: z
    .record(z.string().regex(/^\d{1,6}$/, "a block index"), shortText(NOTED_IMAGE_URL_MAX_LENGTH))
    .refine(
      (urls) => Object.keys(urls).length <= NOTED_IMAGE_URLS_MAX,
      `at most ${NOTED_IMAGE_URLS_MAX} image URLs`,
    )
    .optional(),
  callsOutsideHistory: z
    .strictObject({
      calls: z.int().min(1),
      usage: usageSchema,
      dollars: z.number().min(0),
      reported: count,
      estimated: count,
      unknown: count,
    })
    .optional(),
};

/**
 * Gateway-owned facts as a caller of the gateway passes them: a closed set of scalar fields, so
 * no list of items and no raw provider body can hide in it (B5).
 */
export const gatewayFactsSchema = z
  .strictObject(gatewayFactsShape)
  .transform((value) => value as GatewayFacts);

/** Gateway facts as stored: the above, plus how a summary came to be (set by compression). */
export const storedGatewayFactsSchema = z
  .strictObject({
    ...gatewayFactsShape,
    compression: z
      .strictObject({
        throughMessageId: z.string(),
        fromMessageId: z.string(),
        messageCount: z.int().min(0),
        source: z.enum(["caller", "model"]),
      })
      .optional(),
  })
  .transform((value) => value as GatewayFacts);

/** Gateway facts, refused with `gateway_metadata_invalid` when not of the closed shape. */
export function parseGatewayFacts(value: unknown, where: string): GatewayFacts {
  if (value === undefined) return {};
  checkStoredText(value, where, "gateway_metadata_invalid");
  const result = gatewayFactsSchema.safeParse(value);
  if (!result.success) throw invalidInput(where, result.error, "gateway_metadata_invalid");
  return result.data;
}
