import type { PriceBook } from "./prices.js";
import { unknownPrices } from "./prices.js";

/** The price book over the bundled tables of src/pricing. */
export const defaultPriceBook: PriceBook = unknownPrices;
