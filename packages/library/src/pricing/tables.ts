/**
 * The bundled data tables (data, not code): context windows and per-image prices, each row
 * matched by provider and model-name prefix. The tables are validated when first read.
 */
import { z } from "zod";
import { VerbatimError } from "../core/errors.js";
import contextWindowData from "./data/context-windows.json" with { type: "json" };
import imagePriceData from "./data/image-prices.json" with { type: "json" };

const rowBase = { provider: z.string().min(1), modelPrefix: z.string().min(1) };
const contextTable = z.strictObject({
  about: z.string(),
  rows: z.array(z.strictObject({ ...rowBase, contextWindow: z.number().int().positive() })),
});
const imageTable = z.strictObject({
  about: z.string(),
  rows: z.array(z.strictObject({ ...rowBase, dollarsPerImage: z.number().nonnegative() })),
});

interface Row {
  readonly provider: string;
  readonly modelPrefix: string;
}

function validated<T>(schema: z.ZodType<T>, data: unknown, file: string): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    throw new VerbatimError(
      "pricing_table_invalid",
      `${file} does not validate: ${parsed.error.message}`,
      {
        where: `src/pricing/data/${file}`,
      },
    );
  }
  return parsed.data;
}

let contextRows: readonly (Row & { contextWindow: number })[] | undefined;
let imageRows: readonly (Row & { dollarsPerImage: number })[] | undefined;

export function contextWindowRows(): readonly (Row & { contextWindow: number })[] {
  contextRows ??= validated(contextTable, contextWindowData, "context-windows.json").rows;
  return contextRows;
}

export function imagePriceRows(): readonly (Row & { dollarsPerImage: number })[] {
  imageRows ??= validated(imageTable, imagePriceData, "image-prices.json").rows;
  return imageRows;
}

/**
 * The row with the longest prefix of `model` for `provider` (or "*"); OpenRouter slugs
 * (`vendor/model`) are tried whole first, then by the part after the slash.
 */
export function matchRow<R extends Row>(
  rows: readonly R[],
  provider: string,
  model: string,
): R | undefined {
  const names = [model];
  const slash = model.indexOf("/");
  if (slash >= 0) names.push(model.slice(slash + 1));
  for (const name of names) {
    let best: R | undefined;
    for (const row of rows) {
      if (row.provider !== provider && row.provider !== "*") continue;
      if (!name.startsWith(row.modelPrefix)) continue;
      const better =
        best === undefined ||
        row.modelPrefix.length > best.modelPrefix.length ||
        (row.modelPrefix.length === best.modelPrefix.length && row.provider !== "*");
      if (better) best = row;
    }
    if (best !== undefined) return best;
  }
  return undefined;
}
