/** The console routes' query parameters of lists and pages (docs/console.md). */
import { z } from "zod";
import { isStorableText } from "verbatim-llm/internal";

export const DEFAULT_PAGE_LIMIT_BYTES = 1024 * 1024;

export const viewSchema = z
  .enum(["stored", "chatml", "model-visible"])
  .default("stored")
  .describe("stored rows, their canonical ChatML projection, or what the model sees (B2, B9, B12)");

export const pageLimitBytesSchema = z.coerce
  .number()
  .int()
  .min(1024)
  .max(16 * 1024 * 1024)
  .default(DEFAULT_PAGE_LIMIT_BYTES)
  .describe(
    "Most UTF-8 bytes of the page's messages as compact JSON; longer content is cut, longest first, and content_truncated is set (B12).",
  );

export const listQuerySchema = z.object({
  subject_uid: z
    .string()
    .min(1)
    .max(200)
    .refine(
      isStorableText,
      "a subject is well-formed Unicode without U+0000 (NUL), as every stored string (docs/server/README.md)",
    )
    .optional(),
  subject_prefix: z
    .string()
    .min(1)
    .max(200)
    .refine(isStorableText, "a subject prefix is well-formed Unicode without U+0000 (NUL)")
    .optional()
    .describe("Only subjects starting with this text (`%` and `_` are plain characters)."),
  created_after: z.iso
    .datetime({ offset: true })
    .optional()
    .describe("Only those created at or after this instant (ISO 8601)."),
  created_before: z.iso
    .datetime({ offset: true })
    .optional()
    .describe("Only those created before this instant (ISO 8601)."),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .max(2048)
    .optional()
    .describe(
      "next_cursor of the previous page: where the next one starts (by key, at any depth).",
    ),
});
